"""The library entry point of `gpuwise tune`: check the spec, decide the search space, search, summarize."""

from __future__ import annotations

from gpuwise.i18n import joined, msg
from gpuwise.tune.model import TuneResult
from gpuwise.tune.search import Progress, TuneOptions, run_search


def require_optuna():
    try:
        import optuna
    except ImportError as exc:
        from gpuwise.errors import MissingDependencyError

        raise MissingDependencyError(
            msg("`gpuwise tune` needs Optuna, which is not installed ({exc}).").format(exc=exc),
            fix=msg("pip install 'gpuwise[tune]'"),
        ) from exc
    return optuna


def tune(opts: TuneOptions, progress: Progress | None = None) -> TuneResult:
    """Run or resume the study `opts.study` and return its result (raises GpuwiseError for bad input)."""
    from gpuwise.bench import require_torch
    from gpuwise.errors import UserInputError
    from gpuwise.tune import knobs
    from gpuwise.tune.storage import check_study_name
    from gpuwise.tune.summary import summarize
    from gpuwise.workloads.spec import SpecConfig, build

    check_study_name(opts.study)  # before anything is imported or written
    require_optuna()
    require_torch()
    if not opts.command and opts.rank_prefix is None:
        from gpuwise.tune import preloaded

        preloaded.start()  # its torch import overlaps the spec build; trials fork from it
    if opts.batch_size < 4 or opts.batch_size % 4:
        raise UserInputError(
            msg("--batch-size {batch_size} cannot be split into 2 and 4 micro-batches").format(
                batch_size=opts.batch_size
            ),
            fix=msg("pass a multiple of 4"),
        )
    if opts.command:
        if not opts.only:
            raise UserInputError(
                msg("command mode needs --only: gpuwise cannot know which knobs your script applies"),
                fix=msg(
                    "pass --only with the knobs your script reads from gpuwise.tune.trial_knobs(), e.g. "
                    "--only num_workers"
                ),
            )
        spec = None
        machine = knobs.Machine(
            device=opts.device, world_size=opts.nproc, cpu_count=_cpus(), has_compiler=True
        )
    else:
        spec = build(opts.target, SpecConfig(device=opts.device, seed=opts.seed, batch_size=opts.batch_size))
        machine = knobs.detect_machine(spec, opts.device, opts.nproc)
    space, skipped = knobs.search_space(machine, opts.keep_numerics)
    # offered once a trial runs out of memory or uses most of it (sharding): searched from then on
    with_memory, _unused = knobs.search_space(machine, opts.keep_numerics, memory_short=True)
    memory_space = {k: v for k, v in with_memory.items() if k not in space}
    if opts.only:
        unknown = [k for k in opts.only if k not in knobs.by_name()]
        if unknown:
            raise UserInputError(
                msg("unknown knob(s) {join}").format(join=joined(", ", unknown)),
                fix=msg("use knob names: {join}").format(join=joined(", ", knobs.by_name())),
            )
        space = {k: v for k, v in space.items() if k in opts.only}
        memory_space = {k: v for k, v in memory_space.items() if k in opts.only}
    if not space:
        raise UserInputError(
            msg("no knob can be searched here (all skipped)"),
            fix=msg("see the skipped knobs with --only unset"),
        )
    study = run_search(opts, space, progress or (lambda event, data: None), memory_space)
    skipped = [s for s in skipped if s.knob not in space]  # a memory knob the search came to offer
    return summarize(study, opts, space, skipped, spec.tokens_per_sample if spec else None)


def _cpus() -> int:
    import os

    return os.cpu_count() or 1
