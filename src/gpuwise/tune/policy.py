"""What the search tries, in which order: the baseline, one-knob probes, TPE, and unmeasured neighbours of
the best setting when TPE has nothing new to propose.

- Probes change one knob from the baseline, categories in order of expected impact (DeepSpeed Autotuning's
  lesson: order by impact, it saves trials); a profile's findings move data or communication first.
- Repeats: a setting already measured is not run again (Optuna's FAQ, "How can I ignore duplicated
  samples?": hand back the stored value). On a small categorical space TPE proposes measured settings
  often, and each repeat would cost a whole trial and tell the search nothing new.
- Neighbours: when TPE proposes a measured setting, its model has settled on what it knows; the next
  trial changes one knob of the best setting so far (local search), again in category order.
"""

from __future__ import annotations

import json

from gpuwise.i18n import msg
from gpuwise.tune import knobs

# search order by expected impact (DeepSpeed Autotuning's lesson); profile priors move a category first
DEFAULT_ORDER = ["precision", "batch", "compile", "optimizer", "memory", "data", "ddp", "nccl"]
LOADER_ONLY = ("prefetch_factor", "persistent_workers")  # DataLoader rejects them with num_workers=0
DDP_ONLY = ("bucket_cap_mb", "gradient_as_bucket_view", "static_graph", "comm_hook")  # no DDP under FSDP


def category_order(prior: str | None) -> tuple[list[str], str]:
    if prior == "data":
        return ["data"] + [c for c in DEFAULT_ORDER if c != "data"], msg(
            "the baseline step is data-loader bound"
        )
    if prior == "communication":
        first = ["ddp", "nccl"]
        return first + [c for c in DEFAULT_ORDER if c not in first], msg(
            "communication is exposed in the step"
        )
    return list(DEFAULT_ORDER), msg("expected impact: precision > batch > compile > data > DDP > NCCL")


def _inert(params: dict) -> tuple[str, ...]:
    """Knobs that do nothing in this setting: loader options without workers, DDP options under FSDP."""
    return (LOADER_ONLY if params.get("num_workers", 0) == 0 else ()) + (
        DDP_ONLY if params.get("sharding") == "fsdp" else ()
    )


def valid(params: dict) -> dict:
    """The setting as it runs: knobs that do nothing in it are dropped (see _inert)."""
    inert = _inert(params)
    return {k: v for k, v in params.items() if k not in inert}


def key(params: dict) -> str:
    """One string per distinct setting (what makes two trials the same measurement): its changes from the
    baseline, so a trial run before a knob joined the space equals one with that knob at its baseline."""
    baseline = {k.name: k.baseline for k in knobs.catalogue()}
    changes = {k: v for k, v in valid(params).items() if k not in baseline or baseline[k] != v}
    return json.dumps(changes, sort_keys=True, default=str)


def baseline_params(space: dict[str, tuple]) -> dict:
    return valid({name: values[0] for name, values in space.items()})


def _ordered_knobs(space: dict[str, tuple], order: list[str]) -> list[str]:
    by_name = knobs.by_name()
    return [
        name
        for category in order
        for name in space
        if by_name[name].category == category and name not in LOADER_ONLY
    ]


def probes(
    space: dict[str, tuple], order: list[str], base: dict | None = None, skip: tuple[str, ...] = ()
) -> list[dict]:
    """One-knob changes from `base` (the baseline), categories in `order` (the most promising value per
    knob); knobs in `skip` are not probed."""
    base = baseline_params(space) if base is None else base
    out = []
    for name in _ordered_knobs(space, order):
        if name in skip:
            continue
        values = space[name]
        pick = max(values) if name in ("num_workers", "bucket_cap_mb") else values[1]
        params = {**base, name: pick}
        if name == "num_workers":
            params.update({k: space[k][0] for k in LOADER_ONLY if k in space})
        out.append(params)
    return out


def neighbours(
    best: dict, space: dict[str, tuple], order: list[str], skip: tuple[str, ...] = ()
) -> list[dict]:
    """Every setting one knob away from `best`, categories in `order` (loader knobs once workers run);
    knobs in `skip` are not changed."""
    full = {name: best.get(name, values[0]) for name, values in space.items()}
    names = [n for n in _ordered_knobs(space, order) if n not in skip]
    if full.get("num_workers", 0):
        names += [k for k in LOADER_ONLY if k in space]
    out = []
    for name in names:
        for value in space[name]:
            if value != full[name]:
                out.append(valid({**full, name: value}))
    return out


def suggest(trial, space: dict[str, tuple], queued: dict | None = None, skip: tuple[str, ...] = ()) -> dict:
    """Ask the trial for each knob; a knob that would do nothing (see _inert) is not asked for. sharding is
    asked first, since it decides whether the DDP knobs apply (num_workers comes before the loader knobs).
    A queued setting (`queued`) is asked only for the knobs it names: the others stay at their baseline;
    knobs in `skip` (waiting for data loading to be fixed) stay at their baseline unless queued."""
    params: dict = {}
    names = [n for n in ("sharding",) if n in space] + [n for n in space if n != "sharding"]
    for name in names:
        if name in _inert(params) or (queued is not None and name not in queued):
            continue
        if queued is None and name in skip:
            continue
        params[name] = trial.suggest_categorical(name, list(space[name]))
    return params
