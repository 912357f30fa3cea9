"""Command mode's two calls, for scripts gpuwise cannot import (`gpuwise tune -- torchrun ... train.py`).

    from gpuwise.tune import report, trial_knobs
    cfg = trial_knobs()                 # {"num_workers": 4, "precision": "bf16", ...} for this trial
    ...
    for batch in loader:
        ...train step...
        report(samples=len(batch[0]), loss=loss.item())   # once per step, on rank 0

`report` prints the documented progress line (the time since the previous call is the step time), so a
script may also print it itself: `gpuwise-tune step=N samples=S seconds=T [loss=L]`. Outside a tune
trial both calls are harmless: `trial_knobs()` returns {} and `report` prints nothing.
"""

from __future__ import annotations

import json
import os
import time

_state = {"step": 0, "last": None}


def trial_knobs() -> dict:
    """This trial's knob values (the baseline's when gpuwise does not run the script)."""
    path = os.environ.get("GPUWISE_TUNE_CONFIG")
    if not path:
        return {}
    with open(path, encoding="utf-8") as fh:
        return dict(json.load(fh).get("settings", {}))


def report(samples: int, loss: float | None = None) -> None:
    """Call once per training step; the first call only starts the clock."""
    now = time.perf_counter()
    if not os.environ.get("GPUWISE_TUNE_CONFIG") or int(os.environ.get("RANK", "0")) != 0:
        return
    if _state["last"] is None:
        _state["last"] = now
        return
    seconds, _state["last"] = now - _state["last"], now
    extra = f" loss={loss:.6f}" if loss is not None else ""
    print(f"gpuwise-tune step={_state['step']} samples={samples} seconds={seconds:.6f}{extra}", flush=True)
    _state["step"] += 1
