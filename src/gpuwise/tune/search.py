"""The search: baseline, prior-ordered one-knob probes, Optuna TPE, then the baseline again.

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

from gpuwise.i18n import _
from gpuwise.tune import knobs
from gpuwise.tune.trial import TrialOutcome, run_trial

# T4 search order by expected impact (DeepSpeed Autotuning's lesson); profile priors move a category first.
DEFAULT_ORDER = ["precision", "batch", "compile", "optimizer", "memory", "data", "ddp", "nccl"]
DATA_BOUND_FRACTION = (
    0.05  # torch-tb-profiler recommends data-loading fixes above 5 % of the step in DataLoader
)


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


Progress = Callable[[str, dict], None]


def _study(opts: TuneOptions):
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # failed trials carry an "infeasible" constraint (Trial.set_constraint), which TPE learns to avoid
    sampler = optuna.samplers.TPESampler(seed=opts.seed, n_startup_trials=4)
    # steps are counted from the first timed step (warm-up differs per setting), and a trial is judged only
    # after half its timed steps: on a busy machine two steps say little
    pruner = optuna.pruners.MedianPruner(n_startup_trials=3, n_warmup_steps=max(2, opts.steps // 2) - 1)
    opts.storage.parent.mkdir(parents=True, exist_ok=True)
    return optuna.create_study(
        study_name=opts.study,
        storage=f"sqlite:///{opts.storage}",
        load_if_exists=True,
        direction="maximize",
        sampler=sampler,
        pruner=pruner,
    )


IDENTITY = ("target", "device", "batch_size", "warmup", "steps", "keep_numerics", "nproc", "seed")


def _check_identity(study, opts: TuneOptions) -> None:
    from gpuwise.errors import UserInputError

    mine = {k: getattr(opts, k) for k in IDENTITY}
    stored = study.user_attrs.get("identity")
    if stored is None:
        study.set_user_attr("identity", mine)
    elif stored != mine:
        diff = ", ".join(
            f"{k}: {stored.get(k)!r} then, {mine[k]!r} now" for k in mine if stored.get(k) != mine[k]
        )
        raise UserInputError(
            _("study {study!r} in {storage} was started with other settings ({diff})").format(
                study=opts.study, storage=opts.storage, diff=diff
            ),
            fix=_("re-run with the same options, or pass a new --study NAME"),
        )


def baseline_params(space: dict[str, tuple]) -> dict:
    params = {name: values[0] for name, values in space.items()}
    if params.get("num_workers", 0) == 0:
        params.pop("prefetch_factor", None)
        params.pop("persistent_workers", None)
    return params


def category_order(prior: str | None) -> tuple[list[str], str]:
    if prior == "data":
        return ["data"] + [c for c in DEFAULT_ORDER if c != "data"], "the baseline step is data-loader bound"
    if prior == "communication":
        first = ["ddp", "nccl"]
        return first + [c for c in DEFAULT_ORDER if c not in first], "communication is exposed in the step"
    return list(DEFAULT_ORDER), "expected impact: precision > batch > compile > data > DDP > NCCL"


def probes(space: dict[str, tuple], order: list[str]) -> list[dict]:
    """One-knob changes from the baseline, categories in `order` (the most promising value per knob)."""
    base = baseline_params(space)
    by_name = knobs.by_name()
    out = []
    for category in order:
        for name, values in space.items():
            if by_name[name].category != category or name in ("prefetch_factor", "persistent_workers"):
                continue
            pick = max(values) if name in ("num_workers", "bucket_cap_mb") else values[1]
            params = {**base, name: pick}
            if name == "num_workers":
                params.update(
                    {k: space[k][0] for k in ("prefetch_factor", "persistent_workers") if k in space}
                )
            out.append(params)
    return out


def suggest(trial, space: dict[str, tuple]) -> dict:
    params: dict = {}
    for name, values in space.items():
        if name in ("prefetch_factor", "persistent_workers") and params.get("num_workers", 0) == 0:
            continue
        params[name] = trial.suggest_categorical(name, list(values))
    return params


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
        "seconds": [r.seconds for r in timed],
        "data_wait_s": [r.data_wait_s for r in timed],
        "losses": [r.loss for r in outcome.steps[: max(opts.guard_steps, 1)]],
        "info": outcome.info,
        "wall_s": outcome.wall_s,
    }


def _record(trial, outcome: TrialOutcome, role: str, opts: TuneOptions, warmup: int) -> None:
    for key, value in _attrs(outcome, role, opts, warmup).items():
        trial.set_user_attr(key, value)
    trial.set_constraint("failed", 1.0 if outcome.status == "failed" else 0.0)


def _run_baseline_end(study, opts: TuneOptions, space, folder: Path, progress: Progress) -> None:
    """The baseline again, after the search: kept in the study's attributes (Optuna's queue would run
    leftover probes first), so its drift from the first baseline measures how much the machine moved."""
    params = baseline_params(space)
    number = len(study.get_trials(deepcopy=False))
    progress(
        "trial-start", {"number": number, "role": "baseline-end", "params": params, "total": opts.trials}
    )
    config, env = _config(opts, params)
    env = {**opts.env, **env}
    outcome = run_trial(
        config,
        folder / "baseline-end",
        timeout_s=opts.timeout_s,
        nproc=opts.nproc,
        env=env,
        rank_prefix=opts.rank_prefix,
        master_addr=opts.master_addr,
    )
    warmup = warmup_for(opts, params)
    if outcome.status == "ok" and len(outcome.steps) <= warmup:
        outcome = TrialOutcome("failed", outcome.steps, failure="error", reason="no timed steps")
    attrs = _attrs(outcome, "baseline-end", opts, warmup)
    study.set_user_attr("baseline_end", {**attrs, "params": params, "number": number})
    progress(
        "trial-end",
        {"number": number, "role": "baseline-end", "outcome": outcome, "params": params, "warmup": warmup},
    )


def _run_one(study, opts: TuneOptions, space, folder: Path, progress: Progress, total: int):
    import optuna

    trial = study.ask()
    role = trial.user_attrs.get("queued_role", "search")
    params = suggest(trial, space)
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
            folder / f"{trial.number:04d}",
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
        outcome = TrialOutcome("failed", outcome.steps, failure="error", reason="no timed steps")
    _record(trial, outcome, role, opts, warmup)
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
            study.enqueue_trial(dict(t.params), user_attrs={"queued_role": role})
    study.set_user_attr("requeued", sorted(requeued))


def counted(study) -> list:
    """Trials that count toward the budget: finished, not interrupted."""
    import optuna

    done = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
    return [t for t in study.get_trials(deepcopy=False) if t.state in done]


def run_search(opts: TuneOptions, space: dict[str, tuple], progress: Progress) -> object:
    """Run (or continue) the study until `opts.trials` trials finished, then re-measure the baseline."""
    study = _study(opts)
    _check_identity(study, opts)
    _recover(study)
    folder = opts.storage.parent / f"{opts.storage.stem}.trials" / opts.study
    # one inductor cache per study: compiled kernels are reused between trials (rule T4), and a trial
    # killed mid-write cannot corrupt the cache other programs on this machine share
    opts.env.setdefault("TORCHINDUCTOR_CACHE_DIR", str(folder / "inductor-cache"))
    roles = lambda: [t.user_attrs.get("role") for t in counted(study)]  # noqa: E731
    queued = [t.user_attrs.get("queued_role") for t in _waiting(study)]
    if "baseline" not in roles() and "baseline" not in queued:
        study.enqueue_trial(baseline_params(space), user_attrs={"queued_role": "baseline"})
    while len(roles()) < opts.trials:
        if not study.user_attrs.get("probes_queued") and "baseline" in roles():
            order, _why = category_order(opts.prior or _baseline_prior(study, opts))
            for params in probes(space, order):
                study.enqueue_trial(params, user_attrs={"queued_role": "probe"})
            study.set_user_attr("probes_queued", True)
        _run_one(study, opts, space, folder, progress, opts.trials)
    if "baseline_end" not in study.user_attrs:
        _run_baseline_end(study, opts, space, folder, progress)
    return study


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
