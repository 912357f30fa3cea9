"""Run registered benchmarks, each in its own process with a timeout, and judge against peaks.

A benchmark that crashes (segfault, OOM kill), hangs, or raises becomes a `failed` Measurement with
the reason; one that cannot run here (no GPU) becomes `skipped`; the others go on. Processes come
from a forkserver that has imported torch once, so isolation costs milliseconds, not a torch import,
and each runs in its own session so a timeout can kill whatever it started (fio, collective ranks).

Every exit path cleans up: whether the benchmark returned, crashed, timed out, or the runner got
Ctrl-C or SIGTERM, the runner sends SIGTERM to the benchmark's process group (its own `finally`
blocks run and fio stops), waits up to GRACE_S, then SIGKILLs what is left, so no process a
benchmark started outlives it. Each benchmark writes only inside one scratch directory that
the runner creates (in --data-dir, else the temp dir) and removes after the group is gone, so
nothing a benchmark started can leave files behind, whatever it did.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import multiprocessing as mp
import os
import shutil
import signal
import socket
import tempfile
import time
import traceback
from collections.abc import Callable
from datetime import datetime, timezone

from gpuwise.bench.context import BenchContext, MissingTool, Skip, read_clocks
from gpuwise.bench.registry import BenchEntry
from gpuwise.documents.bench import BenchReport, Measurement
from gpuwise.i18n import msg
from gpuwise.registry import Registry

Progress = Callable[[str, str], None]  # (benchmark name, what it is doing now)


def judge(m: Measurement) -> Measurement:
    """Fill percent_of_peak / percent_of_achievable, and flag a result above its peak, or outside its
    own samples' [min, max], as invalid."""
    if m.status != "ok" or m.value is None:
        return m
    if m.headline_outside_stats():
        m.status = "invalid"
        m.reason = msg(
            "the result {value} is outside its own samples ({low} to {high}): a bug in this benchmark"
        ).format(value=f"{m.value:.6g}", low=f"{m.stats.min:.6g}", high=f"{m.stats.max:.6g}")
        return m
    if not m.peak:
        return m
    m.percent_of_peak = round(100.0 * m.value / m.peak, 2)
    if m.achievable_fraction:
        m.percent_of_achievable = round(100.0 * m.value / (m.peak * m.achievable_fraction), 2)
    if m.percent_of_peak > 100.0:
        if m.extra.get("in_network_reduction"):
            # NVLS/SHARP reduce inside the switch, so all-reduce busbw can beat the per-GPU link (REFERENCE §3)
            m.reason = msg("above the link peak: NVLS/SHARP in-network reduction (the known exception)")
        else:
            m.status = "invalid"
            m.reason = msg(
                "{pct} of peak: above {hundred} means the timing or the peak is wrong (peak {peak} {unit}, {source})"
            ).format(
                pct=f"{m.percent_of_peak:.0f}%",
                hundred="100%",
                peak=f"{m.peak:.4g}",
                unit=m.unit,
                source=m.peak_source.text if m.peak_source else msg("no source"),
            )
    return m


def _failed(entry: BenchEntry, status: str, reason: str, missing_tool: str | None = None) -> Measurement:
    return Measurement(
        name=entry.name, layer=entry.layer, status=status, reason=reason, missing_tool=missing_tool
    )  # type: ignore[arg-type]


def _classify(exc: BaseException) -> tuple[str, str]:
    from gpuwise.errors import GpuwiseError

    if isinstance(exc, Skip):  # its message itself: str(exc) would be plain English without the id
        return "skipped", exc.args[0] if len(exc.args) == 1 and isinstance(exc.args[0], str) else str(exc)
    if isinstance(exc, GpuwiseError):
        return "failed", exc.text()
    text = f"{type(exc).__name__}: {exc}".strip()
    if "out of memory" in text.lower():
        return "failed", msg("out of memory: {error} (To fix: run with --quick or smaller --sizes)").format(
            error=text[:300]
        )
    return "failed", text[:500]


def _execute(ctx: BenchContext, entry: BenchEntry, say: Callable[[str], None]) -> list[dict]:
    """Run one benchmark in this process; returns Measurement dicts (picklable across the pipe)."""
    ctx.say = say  # type: ignore[method-assign]
    try:
        module = entry.load()
        results = module.run(ctx, module.make_spec(ctx))
    except BaseException as exc:  # a benchmark's own error must never take the runner down
        if isinstance(exc, KeyboardInterrupt):
            raise
        status, reason = _classify(exc)
        if status == "failed" and os.environ.get("GPUWISE_BENCH_DEBUG"):
            reason += "\n" + traceback.format_exc()
        return [
            _failed(entry, status, reason, exc.tool if isinstance(exc, MissingTool) else None).model_dump()
        ]
    finally:
        del ctx.say  # back to the class's no-op, so the context stays picklable
    clocks = read_clocks(ctx.device)
    out = []
    for m in results:
        m.extra.setdefault("clocks_after", clocks)
        out.append(m.model_dump())
    return out


GRACE_S = 3.0  # after SIGTERM, how long a benchmark may take to clean up before SIGKILL


def _raise_interrupt(_signum, _frame) -> None:
    raise KeyboardInterrupt


def _child_main(conn, ctx: BenchContext, entry: BenchEntry) -> None:
    os.setsid()  # own process group: a timeout kills fio / rank processes this benchmark started
    signal.signal(signal.SIGTERM, _raise_interrupt)  # the runner's SIGTERM runs our `finally` blocks
    signal.signal(signal.SIGINT, _raise_interrupt)
    if ctx.scratch_dir:  # everything this benchmark and its children write goes into the scratch dir
        tempfile.tempdir = ctx.scratch_dir
        os.environ["TMPDIR"] = ctx.scratch_dir
    try:
        conn.send(("result", _execute(ctx, entry, lambda text: conn.send(("progress", text)))))
    except (BrokenPipeError, EOFError, KeyboardInterrupt):
        os._exit(1)  # stopped by the runner or the parent is gone: quietly, after clean-up ran
    finally:
        conn.close()


def _mp_context():
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["gpuwise.bench._preload"])
    return ctx


def start_workers() -> None:
    """Start the forkserver now, so its torch import overlaps the caller's own (saves seconds per run).

    It is stopped at exit (stop_workers): left alone, a forkserver still importing torch when Ctrl-C
    arrives would outlive gpuwise by the rest of that import.
    """
    from multiprocessing import forkserver

    _mp_context()
    forkserver.ensure_running()
    if not _workers["atexit"]:
        atexit.register(stop_workers)
        _workers["atexit"] = True


_workers = {"atexit": False}


def stop_workers() -> None:
    """Stop the forkserver now (SIGTERM, then reap it and remove its socket)."""
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    pid = getattr(server, "_forkserver_pid", None)
    if server is None or pid is None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGTERM)
    with contextlib.suppress(OSError, AttributeError):
        server._stop()  # closes its pipe, waits for it, unlinks its socket


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _wait_group_gone(pgid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _group_alive(pgid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def stop_group(pgid: int, grace_s: float = GRACE_S) -> None:
    """SIGTERM the benchmark's process group, wait `grace_s`, then SIGKILL whatever is left."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    if _wait_group_gone(pgid, grace_s):
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    _wait_group_gone(pgid, 10.0)  # a process in uninterruptible I/O dies when its I/O returns


def _make_scratch(ctx: BenchContext, entry: BenchEntry) -> str:
    """The one directory a benchmark may write to: in --data-dir (storage is measured there), else temp."""
    base = ctx.options.data_dir or tempfile.gettempdir()
    return tempfile.mkdtemp(prefix=f"gpuwise-bench-{entry.name}-", dir=base)


def run_isolated(
    ctx: BenchContext, entry: BenchEntry, progress: Progress | None = None, timeout_s: float | None = None
) -> list[Measurement]:
    """Run one benchmark in a child process; a hang past the timeout or a crash becomes `failed`."""
    timeout_s = timeout_s if timeout_s is not None else entry.timeout_s(ctx.mode)
    scratch = None
    try:
        scratch = _make_scratch(ctx, entry)
        return _run_child(dataclasses.replace(ctx, scratch_dir=scratch), entry, progress, timeout_s)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _run_child(
    ctx: BenchContext, entry: BenchEntry, progress: Progress | None, timeout_s: float
) -> list[Measurement]:
    mpc = _mp_context()
    parent_conn, child_conn = mpc.Pipe(duplex=False)
    proc = mpc.Process(target=_child_main, args=(child_conn, ctx, entry), name=f"gpuwise-bench-{entry.name}")
    proc.start()
    child_conn.close()
    try:
        result = _receive(parent_conn, proc, entry, progress, time.monotonic() + timeout_s)
        if result is None:  # the deadline passed (the group is stopped below, SIGTERM first)
            return [
                _failed(
                    entry,
                    "failed",
                    msg("timed out after {seconds} s (stopped with everything it started)").format(
                        seconds=f"{timeout_s:.0f}"
                    ),
                )
            ]
        proc.join(10)
        if result == "died":
            code = proc.exitcode
            how = (
                msg("killed by signal {signal}").format(signal=signal.Signals(-code).name)
                if code is not None and code < 0
                else msg("exit code {code}").format(code=code)
            )
            return [
                _failed(entry, "failed", msg("crashed ({how}) before returning a result").format(how=how))
            ]
        return [Measurement.model_validate(d) for d in result]
    finally:
        # Whatever happened (result, crash, timeout, Ctrl-C, SIGTERM, an error here), the benchmark's
        # process group goes: a process it started must not outlive it (a crashed benchmark's `sleep`,
        # a rank that outlived its launcher).
        parent_conn.close()
        stop_group(proc.pid)  # SIGTERM first, so the benchmark's own `finally` blocks run
        proc.join(5)
        if proc.is_alive():  # stopped before its setsid(), so not yet a group of its own
            proc.kill()
            proc.join(5)


def _receive(
    conn, proc, entry: BenchEntry, progress: Progress | None, deadline: float
) -> list[dict] | str | None:
    """The benchmark's result dicts; "died" if it ended without one; None if `deadline` passed first."""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        if conn.poll(min(0.2, remaining)):
            try:
                kind, payload = conn.recv()
            except EOFError:
                return "died"
            if kind == "progress" and progress:
                progress(entry.name, payload)
            elif kind == "result":
                return payload
        elif not proc.is_alive() and not conn.poll(0):
            return "died"


def run_inline(ctx: BenchContext, entry: BenchEntry, progress: Progress | None = None) -> list[Measurement]:
    """Run one benchmark in this process (no timeout; for tests and the harness-overhead check)."""
    say = (lambda text: progress(entry.name, text)) if progress else (lambda text: None)
    return [Measurement.model_validate(d) for d in _execute(ctx, entry, say)]


def run_benchmarks(
    ctx: BenchContext,
    entries: list[BenchEntry],
    progress: Progress | None = None,
    on_done: Callable[[BenchEntry, list[Measurement]], None] | None = None,
    isolate: bool = True,
    stop_on_failure: bool = False,
) -> BenchReport:
    """Run `entries` one after another (they would disturb each other in parallel) into a BenchReport.

    With `stop_on_failure`, the first failed benchmark ends the run; the ones after it are recorded as
    skipped with that reason, so the report still lists every benchmark asked for.
    """
    report = BenchReport(
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        hostname=socket.gethostname(),
        mode=ctx.mode,
        environment=dict(ctx.environment),
    )
    report.environment["dtype_support"] = ctx.dtype_support_json()
    report.environment["warnings"] = list(ctx.warnings)
    failed_first: str | None = None
    for entry in entries:
        if failed_first is not None:
            reason = msg("not run: {name} failed first (--keep-going runs every benchmark)").format(
                name=failed_first
            )
            report.results.append(_failed(entry, "skipped", reason))
            if on_done:
                on_done(entry, [])
            continue
        started = time.monotonic()
        results = run_isolated(ctx, entry, progress) if isolate else run_inline(ctx, entry, progress)
        for m in results:
            m.layer = m.layer or entry.layer
            m.extra.setdefault("benchmark_seconds", round(time.monotonic() - started, 2))
            report.results.append(judge(m))
        if stop_on_failure and any(m.status == "failed" for m in results):
            failed_first = entry.name
        if on_done:
            on_done(entry, results)
    return report


def bench(
    options,
    only: str | None = None,
    progress: Progress | None = None,
    on_done: Callable[[BenchEntry, list[Measurement]], None] | None = None,
    stop_on_failure: bool = False,
    registry: Registry[BenchEntry] | None = None,
) -> BenchReport:
    """The library entry point (what `gpuwise bench` and `gpuwise doctor --bench` call).

    options: a context.BenchOptions; only: a comma list for registry.select; registry: where the
    benchmarks come from (default: every benchmark module of gpuwise/bench/). Raises
    MissingDependencyError without torch and UserInputError for an unknown benchmark name.
    """
    from gpuwise.bench import require_torch
    from gpuwise.bench.context import build_context
    from gpuwise.bench.registry import select

    entries = select(only, registry)
    start_workers()  # its torch import overlaps ours
    require_torch()
    return run_benchmarks(
        build_context(options), entries, progress=progress, on_done=on_done, stop_on_failure=stop_on_failure
    )
