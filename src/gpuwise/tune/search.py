"""The search: baseline, prior-ordered one-knob probes, Optuna TPE (and an unmeasured neighbour of the best
setting when TPE proposes a measured one: gpuwise.tune.policy), the winner's reduction (reduce.py), then
the baseline again. While the baseline waits on data for over 5 % of its step, precision and compile
knobs wait too (DATA_HELD); they are probed on top of the first setting that brings the wait under it.

Every trial is an Optuna trial in a SQLite study, with its step times, losses and failure kept as user
attributes, so the result is always computed from the storage: `--study NAME` after an interruption
continues where it stopped (an interrupted trial is marked failed "interrupted" and run again), and
the history stays for later. A failed trial (OOM, timeout, crash) is recorded as infeasible through
Optuna's constraints, never as a missing value; slow search trials are pruned on their early steps by
the median of earlier trials.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gpuwise.i18n import N_, joined, msg
from gpuwise.tune import knobs, policy
from gpuwise.tune.policy import baseline_params, category_order, suggest
from gpuwise.tune.storage import new_trial_folder, trials_folder
from gpuwise.tune.trial import TrialOutcome, because, run_trial

# heuristic: a trial that used more than this share of its memory leaves too little for a longer sequence,
# a larger batch or allocator fragmentation, so sharding (ZeRO-1 / FSDP2) is offered from then on
MEMORY_SHORT_FRACTION = 0.85
MAX_REPEATS = 1  # measured settings TPE may propose in a row before the search steps to a neighbour
DATA_BOUND_FRACTION = (
    0.05  # torch-tb-profiler recommends data-loading fixes above 5 % of the step in DataLoader
)
# while the baseline is data-bound, these categories wait: on a step that mostly waits for data they can
# gain only the compute share of it (Amdahl), and a compile trial costs a compile
DATA_HELD = ("precision", "compile")


@dataclass
class TuneOptions:
    target: str
    device: str = "cpu"
    batch_size: int = 32
    warmup: int = 3
    steps: int = 10
    trials: int = 20
    timeout_s: float = 300.0
    seed: int = 0
    keep_numerics: bool = False
    study: str = "gpuwise-tune"
    storage: Path = Path("gpuwise-tune.sqlite3")
    nproc: int = 1
    guard_steps: int = 3
    prior: str | None = None  # "data" | "communication" (from a gpuwise-profile/1 file)
    rank_prefix: Callable[[int], list[str]] | None = None
    master_addr: str = "127.0.0.1"
    only: list[str] = field(default_factory=list)  # restrict the search to these knobs
    env: dict[str, str] = field(default_factory=dict)  # for every trial, e.g. GLOO_SOCKET_IFNAME
    command: list[str] | None = None  # command mode: run this instead of a spec (it reads its knobs)
    memory_short_fraction: float = MEMORY_SHORT_FRACTION


Progress = Callable[[str, dict], None]


def _study(opts: TuneOptions):
    import optuna

    from gpuwise.tune.storage import open_study

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # failed trials carry an "infeasible" constraint (Trial.set_constraint), which TPE learns to avoid
    sampler = optuna.samplers.TPESampler(seed=opts.seed, n_startup_trials=4)
    # steps are counted from the first timed step (warm-up differs per setting), and a trial is judged only
    # after half its timed steps: on a busy machine two steps say little
    pruner = optuna.pruners.MedianPruner(n_startup_trials=3, n_warmup_steps=max(2, opts.steps // 2) - 1)
    return open_study(opts.study, opts.storage, sampler, pruner)


IDENTITY = ("target", "device", "batch_size", "warmup", "steps", "keep_numerics", "nproc", "seed")


def _check_identity(study, opts: TuneOptions) -> None:
    from gpuwise.errors import UserInputError

    mine = {k: getattr(opts, k) for k in IDENTITY}
    stored = study.user_attrs.get("identity")
    if stored is None:
        study.set_user_attr("identity", mine)
    elif stored != mine:
        diff = joined(
            ", ",
            (
                msg("{key}: {then} then, {now} now").format(
                    key=k, then=repr(stored.get(k)), now=repr(mine[k])
                )
                for k in mine
                if stored.get(k) != mine[k]
            ),
        )
        raise UserInputError(
            msg("study {study!r} in {storage} was started with other settings ({diff})").format(
                study=opts.study, storage=opts.storage, diff=diff
            ),
            fix=msg("re-run with the same options, or pass a new --study NAME"),
        )


def warmup_for(opts: TuneOptions, params: dict) -> int:
    """Warm-up steps for this setting: at least what the DataLoader prefetches when it starts.

    Workers fill num_workers x prefetch_factor batches while the first steps run; timing while that
    buffer drains would measure a rate the loader cannot sustain (seen here: 1,712 samples/s on a
    workload whose reads allow at most 200)."""
    workers = params.get("num_workers", 0)
    if not workers:
        return opts.warmup
    buffered = workers * params.get("prefetch_factor", 2)
    return max(opts.warmup, -(-buffered // params.get("accumulation", 1)) + 1)


def _config(opts: TuneOptions, params: dict) -> tuple[dict, dict]:
    settings = knobs.to_settings(params)
    env = settings.env
    fields = {k: v for k, v in dataclasses.asdict(settings).items() if k != "env"}
    if opts.command:
        raw = {k: v for k, v in params.items() if not k.isupper()}
        return {"command": opts.command, "steps": warmup_for(opts, params) + opts.steps, "settings": raw}, env
    config = {
        "target": opts.target,
        "device": opts.device,
        "seed": opts.seed,
        "batch_size": opts.batch_size,
        "steps": warmup_for(opts, params) + opts.steps,
        "settings": fields,
    }
    return config, env


def _attrs(outcome: TrialOutcome, role: str, opts: TuneOptions, warmup: int) -> dict:
    timed = outcome.steps[warmup:]
    return {
        "role": role,
        "warmup": warmup,
        "status": outcome.status,
        "failure": outcome.failure,
        "reason": outcome.reason,
        "reason_msg": outcome.reason_msg,
        "seconds": [r.seconds for r in timed],
        "data_wait_s": [r.data_wait_s for r in timed],
        "losses": [r.loss for r in outcome.steps[: max(opts.guard_steps, 1)]],
        "info": outcome.info,
        "wall_s": outcome.wall_s,
        "ignored_lines": outcome.ignored_lines,
    }


def _record(trial, outcome: TrialOutcome, role: str, opts: TuneOptions, warmup: int) -> None:
    for key, value in _attrs(outcome, role, opts, warmup).items():
        trial.set_user_attr(key, value)
    trial.set_constraint("failed", 1.0 if outcome.status == "failed" else 0.0)


def run_stored(
    study,
    opts: TuneOptions,
    params: dict,
    role: str,
    number: int,
    where: Path,
    progress: Progress,
    total: int,
) -> dict:
    """Run a setting outside Optuna's trials (the closing baseline, the winner's reduction: Optuna's queue
    would run leftover probes first) and return its attributes, with its params and number."""
    progress("trial-start", {"number": number, "role": role, "params": params, "total": total})
    config, env = _config(opts, params)
    env = {**opts.env, **env}
    retry = 1
    while where.exists():  # an interrupted attempt left its folder: kept, never reused
        where, retry = where.with_name(f"{where.name.split('.')[0]}.retry{retry}"), retry + 1
    outcome = run_trial(
        config,
        new_trial_folder(where),
        timeout_s=opts.timeout_s,
        nproc=opts.nproc,
        env=env,
        rank_prefix=opts.rank_prefix,
        master_addr=opts.master_addr,
    )
    warmup = warmup_for(opts, params)
    if outcome.status == "ok" and len(outcome.steps) <= warmup:
        outcome = TrialOutcome("failed", outcome.steps, failure="error", **because(N_("no timed steps")))
    progress(
        "trial-end",
        {"number": number, "role": role, "outcome": outcome, "params": params, "warmup": warmup},
    )
    return {**_attrs(outcome, role, opts, warmup), "params": params, "number": number}


def _run_baseline_end(study, opts: TuneOptions, space, folder: Path, progress: Progress) -> None:
    """The baseline again, after the search and the reduction: its drift from the first baseline
    measures how much the machine moved while they ran."""
    steps = (study.user_attrs.get("reduction") or {}).get("steps", [])
    number = len(study.get_trials(deepcopy=False)) + len(steps)
    params = baseline_params(space)
    total = opts.trials + len(steps) + 1
    attrs = run_stored(study, opts, params, "baseline-end", number, folder / "baseline-end", progress, total)
    study.set_user_attr("baseline_end", attrs)


def _run_one(study, opts: TuneOptions, space, folder: Path, progress: Progress, total: int):
    import optuna

    trial = study.ask()
    role = trial.user_attrs.get("queued_role", "search")
    params = suggest(trial, space, trial.user_attrs.get("queued_params"), skip=held_knobs(study, space))
    earlier = measured(study).get(policy.key(params)) if role != "baseline" else None
    if earlier is not None and not _measure_again(study, earlier, opts):
        _repeat(study, trial, earlier)
        return None
    samples = opts.batch_size * opts.nproc
    progress("trial-start", {"number": trial.number, "role": role, "params": params, "total": total})
    seconds: list[float] = []
    warmup = warmup_for(opts, params)

    def on_step(rec) -> bool:
        if rec.index < warmup:
            return False
        seconds.append(rec.seconds)
        trial.report(samples * len(seconds) / sum(seconds), len(seconds) - 1)
        return role == "search" and len(seconds) >= max(2, opts.steps // 2) and trial.should_prune()

    config, env = _config(opts, params)
    env = {**opts.env, **env}
    try:
        outcome = run_trial(
            config,
            new_trial_folder(folder / f"{trial.number:04d}"),
            timeout_s=opts.timeout_s,
            nproc=opts.nproc,
            env=env,
            rank_prefix=opts.rank_prefix,
            master_addr=opts.master_addr,
            on_step=on_step,
        )
    except BaseException:  # Ctrl-C: the trial is recorded as interrupted, and re-run on resume
        trial.set_user_attr("role", role)
        trial.set_user_attr("failure", "interrupted")
        study.tell(trial, state=optuna.trial.TrialState.FAIL)
        raise
    if outcome.status == "ok" and len(outcome.steps) <= warmup:
        outcome = TrialOutcome("failed", outcome.steps, failure="error", **because(N_("no timed steps")))
    _record(trial, outcome, role, opts, warmup)
    short = memory_short(outcome, trial.number, opts.memory_short_fraction)
    if short and "memory_short" not in study.user_attrs:
        study.set_user_attr("memory_short", short["reason"])
        study.set_user_attr("memory_short_msg", short["reason_msg"])
    if outcome.status == "pruned":
        study.tell(trial, state=optuna.trial.TrialState.PRUNED)
    elif outcome.status == "failed":
        study.tell(trial, 0.0)  # infeasible via the constraint attribute; TPE learns to avoid the region
    else:
        timed = [s.seconds for s in outcome.steps[warmup:]]
        study.tell(trial, samples * len(timed) / sum(timed))
    progress(
        "trial-end",
        {"number": trial.number, "role": role, "outcome": outcome, "params": params, "warmup": warmup},
    )
    return trial.number


def _enqueue(study, params: dict, role: str) -> None:
    """Queue a setting to run next; knobs it does not name run at their baseline, even a knob that joined
    the space after it was queued (sharding, once memory is short), rather than at a sampled value."""
    study.enqueue_trial(params, user_attrs={"queued_role": role, "queued_params": params})


def _recover(study) -> None:
    """Trials a killed run left RUNNING (or Ctrl-C left FAILed) are marked interrupted and queued again."""
    import optuna

    requeued = set(study.user_attrs.get("requeued", []))
    for t in study.get_trials(deepcopy=False):
        if t.state == optuna.trial.TrialState.RUNNING:
            study._storage.set_trial_user_attr(t._trial_id, "failure", "interrupted")
            study.tell(t.number, state=optuna.trial.TrialState.FAIL)
        elif not (t.state == optuna.trial.TrialState.FAIL and t.user_attrs.get("failure") == "interrupted"):
            continue
        if t.number not in requeued:
            requeued.add(t.number)
            role = t.user_attrs.get("role") or t.user_attrs.get("queued_role", "search")
            _enqueue(study, dict(t.params), role)
    study.set_user_attr("requeued", sorted(requeued))


def counted(study) -> list:
    """Trials that count toward the budget: finished, not interrupted, not a repeat of a measured one."""
    import optuna

    done = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
    return [
        t
        for t in study.get_trials(deepcopy=False)
        if t.state in done and t.user_attrs.get("role") != "repeat"
    ]


def measured(study) -> dict[str, object]:
    """{setting key: the trial that measured it} over the counted trials."""
    return {policy.key(t.params): t for t in counted(study)}


def _measure_again(study, earlier, opts: TuneOptions) -> bool:
    """A setting proposed again whose only measurement was unreliable (its +/- larger than its value) is
    measured once more instead of being handed back (summary.unreliable)."""
    from gpuwise.tune import stats
    from gpuwise.tune.summary import unreliable

    seconds = earlier.user_attrs.get("seconds") or []
    if earlier.user_attrs.get("status") != "ok" or not seconds:
        return False
    if not unreliable(stats.throughput(seconds, opts.batch_size, seed=earlier.number)):
        return False
    same = policy.key(earlier.params)
    return sum(policy.key(t.params) == same for t in counted(study)) < 2


def _repeat(study, trial, earlier) -> None:
    """A setting measured before: Optuna gets the stored result back, and nothing runs (no budget used)."""
    import optuna

    trial.set_user_attr("role", "repeat")
    trial.set_user_attr("repeat_of", earlier.number)
    if earlier.state == optuna.trial.TrialState.PRUNED:
        study.tell(trial, state=optuna.trial.TrialState.PRUNED)
        return
    trial.set_constraint("failed", 1.0 if earlier.user_attrs.get("status") == "failed" else 0.0)
    study.tell(trial, earlier.value)


def _queue_neighbour(study, space, order: list[str]) -> bool:
    """The first unmeasured one-knob change of the best settings so far; False when there is none."""
    seen = measured(study)
    ranked = sorted(
        (t for t in seen.values() if t.value is not None and t.user_attrs.get("status") == "ok"),
        key=lambda t: -t.value,
    )
    for t in ranked:
        for params in policy.neighbours(dict(t.params), space, order, held_knobs(study, space)):
            if policy.key(params) not in seen:
                _enqueue(study, params, "neighbour")
                return True
    return False


def memory_short(outcome: TrialOutcome, number: int, fraction: float) -> dict | None:
    """Why memory is short after this trial (it ran out, or used over `fraction` of it), as because()
    words it, or None."""
    if outcome.failure == "oom":
        return because(N_("trial {number} ran out of memory"), number=number)
    peak, total = (
        (outcome.info or {}).get("peak_memory_bytes"),
        (outcome.info or {}).get("memory_total_bytes"),
    )
    if peak and total and peak / total > fraction:
        return because(
            N_("trial {number} used {used} of the memory a rank may use (over {limit})"),
            number=number,
            used=f"{peak / total:.0%}",
            limit=f"{fraction:.0%}",
        )
    return None


def _offer_memory_knobs(study, space: dict, memory_space: dict) -> None:
    """Once memory is short: the memory knobs join the space, each value probed from the baseline."""
    if not study.user_attrs.get("memory_short") or all(k in space for k in memory_space):
        return
    space.update(memory_space)
    if study.user_attrs.get("memory_probes_queued"):
        return  # a resumed study: the space grows again, the probes ran (or wait in the queue)
    base = baseline_params(space)
    for name, values in memory_space.items():
        for value in values[1:]:
            _enqueue(study, policy.valid({**base, name: value}), "probe")
    study.set_user_attr("memory_probes_queued", True)


def run_search(
    opts: TuneOptions, space: dict[str, tuple], progress: Progress, memory_space: dict | None = None
) -> object:
    """Run (or continue) the study until `opts.trials` trials finished, reduce the winner to its smallest
    winning change (reduce.py), then re-measure the baseline.
    `memory_space` (sharding) joins `space`, in place, once a trial ran out of memory or used most of it."""
    from gpuwise.errors import UserInputError

    folder = trials_folder(opts.storage, opts.study)  # checks the name before anything is written
    study = _study(opts)
    _check_identity(study, opts)
    if not study.get_trials(deepcopy=False) and folder.is_dir() and any(folder.iterdir()):
        raise UserInputError(
            msg("{folder} holds trials of an earlier study named {study!r}, not in {storage}").format(
                folder=folder, study=opts.study, storage=opts.storage
            ),
            fix=msg("pass another --study NAME, or move that folder away"),
        )
    _recover(study)
    # one inductor cache per study: compiled kernels are reused between trials (rule T4), and a trial
    # killed mid-write cannot corrupt the cache other programs on this machine share
    opts.env.setdefault("TORCHINDUCTOR_CACHE_DIR", str(folder / "inductor-cache"))
    roles = lambda: [t.user_attrs.get("role") for t in counted(study)]  # noqa: E731
    queued = [t.user_attrs.get("queued_role") for t in _waiting(study)]
    if "baseline" not in roles() and "baseline" not in queued:
        _enqueue(study, baseline_params(space), "baseline")
    order, repeats = category_order(opts.prior or _baseline_prior(study, opts))[0], 0
    while len(roles()) < opts.trials:
        _offer_memory_knobs(study, space, memory_space or {})  # first: an OOM-ing step needs memory relief
        if not study.user_attrs.get("probes_queued") and "baseline" in roles():
            order, _why = category_order(opts.prior or _baseline_prior(study, opts))
            held = list(DATA_HELD) if _baseline_prior(study, opts) == "data" else []
            study.set_user_attr("held", held)  # before the probes: held knobs are not probed yet
            for params in policy.probes(space, order, skip=held_knobs(study, space)):
                _enqueue(study, params, "probe")
            study.set_user_attr("probes_queued", True)
        _release_held(study, space, order)
        if _run_one(study, opts, space, folder, progress, opts.trials) is not None:
            repeats = 0
            continue
        repeats += 1
        if repeats >= MAX_REPEATS:
            repeats = 0
            if not _queue_neighbour(study, space, order):
                break  # every setting around every measured one is measured: the space is done
    from gpuwise.tune.reduce import reduce_winner

    reduce_winner(study, opts, space, folder, progress)
    if "baseline_end" not in study.user_attrs:
        _run_baseline_end(study, opts, space, folder, progress)
    return study


def held_knobs(study, space: dict) -> tuple[str, ...]:
    """Knobs that wait for data loading to be fixed: compute-side knobs (DATA_HELD categories) while the
    baseline is data-bound and no trial has brought the data wait under DATA_BOUND_FRACTION yet."""
    held = study.user_attrs.get("held") or []
    if not held or study.user_attrs.get("held_released") is not None:
        return ()
    by_name = knobs.by_name()
    return tuple(name for name in space if by_name[name].category in held)


def data_wait_share(attrs: dict) -> float | None:
    seconds = sum(attrs.get("seconds") or [])
    return sum(attrs.get("data_wait_s") or []) / seconds if seconds > 0 else None


def _release_held(study, space: dict, order: list[str]) -> None:
    """Once a trial waits on data for at most DATA_BOUND_FRACTION of its step, the held knobs are
    probed on top of the fastest such setting (on the data-bound baseline they could not show)."""
    waiting = held_knobs(study, space)
    if not waiting:
        return
    fixed = []
    for t in counted(study):
        share = data_wait_share(t.user_attrs) if t.user_attrs.get("status") == "ok" and t.value else None
        if share is not None and share <= DATA_BOUND_FRACTION:
            fixed.append(t)
    if not fixed:
        return
    best = max(fixed, key=lambda t: t.value)
    study.set_user_attr("held_released", best.number)
    base = {name: best.params.get(name, values[0]) for name, values in space.items()}
    for params in policy.probes({k: space[k] for k in waiting}, order, base=base):
        _enqueue(study, policy.valid({**base, **params}), "probe")


def _waiting(study) -> list:
    import optuna

    return study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.WAITING,))


def _baseline_prior(study, opts: TuneOptions) -> str | None:
    """The baseline's own data wait: above 5 % of the step means the step waits on the DataLoader."""
    for t in counted(study):
        if t.user_attrs.get("role") == "baseline" and t.user_attrs.get("seconds"):
            wait, total = sum(t.user_attrs["data_wait_s"]), sum(t.user_attrs["seconds"])
            if total > 0 and wait / total > DATA_BOUND_FRACTION:
                return "data"
    return None
