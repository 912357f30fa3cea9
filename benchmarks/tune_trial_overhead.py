"""A tune trial's fixed start-up: `python -m gpuwise.tune.worker` (exec) vs a fork of tune's preloaded
forkserver (torch imported once), on the trial tune runs by default.

    python benchmarks/tune_trial_overhead.py [--repeats 3] [--workload mlp-slow-data] [--steps 13]

Each trial runs the workload through gpuwise.tune.trial.run_trial, the two ways interleaved (so load on
this shared machine hits both alike). Fixed start-up = the trial's wall time minus the time its steps
took (sum of every step's seconds, warm-up included): Python start, imports, building the spec, the
result file and the clean-up. The first forked trial, which waits for the forkserver's own torch import
(once per tune run), is reported apart.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path


def _trial(workload: str, steps: int, folder: Path, preloaded: bool) -> tuple[float, float]:
    from gpuwise.tune.trial import run_trial

    config = {
        "target": workload,
        "device": "cpu",
        "seed": 0,
        "batch_size": 32,
        "steps": steps,
        "settings": {},
    }
    out = run_trial(config, folder, timeout_s=600, preloaded=preloaded)
    if out.status != "ok":
        raise SystemExit(f"trial failed: {out.reason}")
    stepped = sum(r.seconds for r in out.steps)
    return out.wall_s, out.wall_s - stepped


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workload", default="mlp-slow-data")
    ap.add_argument("--steps", type=int, default=13, help="steps per trial (tune's default: 3 + 10)")
    args = ap.parse_args()
    from gpuwise.tune import preloaded

    runs: dict[str, list[tuple[float, float]]] = {"exec": [], "preloaded": []}
    with tempfile.TemporaryDirectory(prefix="gw-tu-overhead-") as tmp:
        preloaded.start()  # tune starts it before its own imports; here the first trial waits for it
        first = _trial(args.workload, args.steps, Path(tmp) / "first", True)
        for i in range(args.repeats):
            for mode in ("exec", "preloaded"):
                folder = Path(tmp) / f"{mode}-{i}"
                runs[mode].append(_trial(args.workload, args.steps, folder, mode == "preloaded"))
    print(f"{args.workload}, {args.steps} steps per trial, {args.repeats} trials each way (interleaved)")
    print(
        f"first preloaded trial (waits for the forkserver's torch import, once per run): fixed {first[1]:.2f} s"
    )
    for mode, rows in runs.items():
        wall = statistics.median(w for w, _ in rows)
        fixed = statistics.median(f for _, f in rows)
        each = ", ".join(f"{f:.2f}" for _, f in rows)
        print(
            f"{mode:>9}: fixed start-up median {fixed:.2f} s ({each}) of a {wall:.2f} s trial = {fixed / wall:.1%}"
        )


if __name__ == "__main__":
    main()
