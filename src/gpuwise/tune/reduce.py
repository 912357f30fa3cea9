"""The smallest winning change: after the search, drop the winner's changes one at a time and keep only
those whose removal costs more than the noise.

Backward elimination, measured in this run: the winner is measured again, then each of its changes is
set back to the baseline in turn; when the setting without it is not slower beyond the noise (the same
rule a winner must pass: the 95 % interval's lower end above 1 + MIN_GAIN), the change goes, and the
setting without it is the new reference. Each kept change is worth what its removal cost (with the
interval). Changes that cost something of their own (numerics other than none, or a declared cost such
as activation checkpointing's extra forward) and knobs whose one-knob probe gained least are dropped
first. A removal whose trial failed keeps the change (it was needed); a noisy measurement only widens
the interval whose lower end decides, so it can drop a change, never keep one by chance. When the
setting left was measured too noisily to report (summary.unreliable), it is measured once more. The
trials are stored in the study's attributes, so an interrupted reduction continues where it stopped.
"""

from __future__ import annotations

from pathlib import Path

from gpuwise.tune import knobs, policy, stats
from gpuwise.tune.search import Progress, TuneOptions, counted, run_stored


def _ok(attrs: dict) -> bool:
    return attrs.get("status") == "ok" and bool(attrs.get("seconds"))


def reliable(seconds: list[float], samples: int, seed: int = 0) -> bool:
    """Not summary.unreliable: the throughput interval's half-width is no larger than the value."""
    from gpuwise.tune.summary import unreliable

    return not unreliable(stats.throughput(seconds, samples, seed=seed))


def _clean(attrs: dict, opts: TuneOptions) -> bool:
    return _ok(attrs) and reliable(attrs["seconds"], opts.batch_size, attrs["number"])


def search_winner(study, opts: TuneOptions, space: dict):
    """The search's best trial against the first baseline, by its speedup interval's lower end: beats it
    beyond the noise, its loss within the numerics guard (a noisy one too: the reduction measures it
    again). None when no trial does."""
    trials = [t for t in counted(study) if _ok(t.user_attrs)]
    base = next((t for t in trials if t.user_attrs.get("role") == "baseline"), None)
    if base is None:
        return None
    base_s, base_losses = base.user_attrs["seconds"], base.user_attrs.get("losses") or []
    best, best_value = None, 0.0
    for t in trials:
        if t is base or not policy.key(t.params) or policy.key(t.params) == "{}":
            continue
        seconds = t.user_attrs["seconds"]
        sp = stats.speedup(seconds, base_s, seed=t.number)
        if not stats.beats_baseline(sp, 0.0):
            continue
        effect = knobs.numerics_of(dict(t.params))
        guard = stats.numerics_guard(t.user_attrs.get("losses") or [], base_losses, effect, opts.guard_steps)
        if base_losses and not guard.ok:
            continue
        if sp.low > best_value:  # the interval's lower end: a noisy trial's value says little
            best, best_value = t, sp.low
    return best


def changes_of(params: dict, space: dict) -> dict:
    return {k: v for k, v in policy.valid(params).items() if k in space and v != space[k][0]}


def drop_order(changes: dict, study) -> list[str]:
    """Changes with a cost (a numerics effect, or a declared cost such as checkpointing's extra forward)
    first, then by the gain their one-knob probe showed, least first; num_workers last (the loader
    options depend on it and go with it)."""
    by_name = knobs.by_name()
    gain: dict[str, float] = {}
    for t in counted(study):
        if t.user_attrs.get("role") == "probe" and t.value and t.user_attrs.get("status") == "ok":
            for name in changes_of(dict(t.params), {k: (by_name[k].baseline,) for k in changes}):
                gain[name] = max(gain.get(name, 0.0), t.value)

    def rank(name: str) -> tuple:
        costly = by_name[name].numerics != "none" or bool(by_name[name].cost)
        return (not costly, name == "num_workers", gain.get(name, 0.0), name)

    return sorted(changes, key=rank)


def _without(params: dict, name: str, space: dict) -> dict:
    return policy.valid({**params, name: space[name][0]})


def reduce_winner(study, opts: TuneOptions, space: dict, folder: Path, progress: Progress) -> None:
    """Run (or continue) the reduction of the search's winner; the steps go to study.user_attrs["reduction"]."""
    state = study.user_attrs.get("reduction")
    if state is None:
        winner = search_winner(study, opts, space)
        if winner is None or len(changes_of(dict(winner.params), space)) < 2:
            study.set_user_attr("reduction", {"from": winner.number if winner else None, "steps": []})
            return  # nothing to reduce: no winner, or one change (its speedup is what it is worth)
        params = policy.valid({n: winner.params.get(n, v[0]) for n, v in space.items()})
        state = {
            "from": winner.number,
            "start": params,
            "order": drop_order(changes_of(params, space), study),
            "first_number": len(study.get_trials(deepcopy=False)),
            "steps": [],
        }
        study.set_user_attr("reduction", state)
    if state.get("from") is None or not state.get("order") or state.get("done"):
        return
    total = opts.trials + len(state["order"]) + 2
    searched = {**study.get_trials(deepcopy=False)[state["from"]].user_attrs, "number": state["from"]}
    while True:
        current, reference, pending = replay(state, space, searched)
        if reference is None:  # the winner's re-measurement comes first
            params, dropped = current, None
        elif not pending:
            if state.get("confirmed") or not changes_of(current, space) or _clean(reference, opts):
                break
            state["confirmed"] = True  # the setting left is measured once more: its figure was too noisy
            params, dropped = current, None
        else:
            params, dropped = _without(current, pending[0], space), pending[0]
        number = state["first_number"] + len(state["steps"])
        attrs = run_stored(
            study, opts, params, "reduction", number, folder / f"{number:04d}", progress, total
        )
        state["steps"].append({**attrs, "dropped": dropped})
        study.set_user_attr("reduction", state)
    state["done"] = True
    study.set_user_attr("reduction", state)


def replay(state: dict, space: dict, searched: dict) -> tuple[dict, dict | None, list[str]]:
    """From the stored steps: the current setting, its reference measurement and the changes still to
    test. The first step is the winner measured again; when that failed, the search's own measurement
    of it (`searched`, its attributes with its number) is the reference."""
    current = dict(state["start"])
    steps = state["steps"]
    if not steps:
        return current, None, list(state["order"])
    reference = steps[0] if _ok(steps[0]) else searched
    for step in steps[1:]:
        if step.get("dropped") is None:
            continue  # the final setting measured once more (a clean figure for the report)
        verdict = decide(step, reference)
        if verdict["kept"] is False:
            current, reference = _without(current, step["dropped"], space), step
    tested = [s["dropped"] for s in steps[1:] if s.get("dropped")]
    return (
        current,
        reference,
        [n for n in state["order"] if n not in tested and n in changes_of(current, space)],
    )


def decide(step: dict, reference: dict) -> dict:
    """Is the dropped change worth keeping? {"kept", "why", and the speedup it gives, with interval}."""
    if not _ok(step):
        return {"kept": True, "why": "removal-failed"}
    seconds, ref = step["seconds"], reference["seconds"]
    # how much faster the setting is with it; a noisy side widens the interval, so its lower end (the
    # test) stays honest even when one of the two throughputs is too noisy to report on its own
    cost = stats.speedup(ref, seconds, seed=step["number"])
    out = {"speedup": cost.value, "low": cost.low, "high": cost.high}
    return {**out, "kept": stats.beats_baseline(cost, 0.0), "why": "measured"}
