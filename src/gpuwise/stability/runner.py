"""Run the probes at an interval for a duration, with the context of every round, then judge.

Round i starts at i * interval after the start (never earlier; a round that overran its slot delays
the next). The context counters are read right before and right after the round's probes, so a
signal describes the seconds the probes ran. A probe that fails in a round leaves its metrics empty
for that round and the error in the sample; after three failures in a row it is dropped for the rest
of the run, with a warning. The overhead (fraction of the wall time spent probing, and the CPU
seconds gpuwise and its children used) is measured and kept in the result.
"""

from __future__ import annotations

import datetime as dt
import resource
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass

from gpuwise.errors import GpuwiseError, UserInputError
from gpuwise.i18n import msg
from gpuwise.stability.context import SIGNALS, ContextReader
from gpuwise.stability.model import Overhead, Sample, StabilityReport
from gpuwise.stability.verdict import judge

MAX_FAILURES_IN_A_ROW = 3


@dataclass(frozen=True)
class RunOptions:
    duration_s: float = 180.0
    interval_s: float = 5.0
    layers: tuple[str, ...] | None = None  # None: every layer this machine has
    data_dir: str | None = None
    peer: str | None = None


def _cpu_seconds() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _check(opts: RunOptions) -> None:
    if not (opts.interval_s > 0 and opts.duration_s > 0):
        raise UserInputError(msg("--for and --interval must be positive"), msg("e.g. --for 2m --interval 5s"))
    if opts.duration_s / opts.interval_s > 100_000:
        raise UserInputError(
            msg("--for {duration} s at --interval {interval} s is over 100000 rounds").format(
                duration=opts.duration_s, interval=opts.interval_s
            ),
            msg("use a longer --interval"),
        )


def run_stability(opts: RunOptions, say: Callable[[str], None] = lambda _text: None) -> StabilityReport:
    from gpuwise.bench.context import BenchOptions, Skip, build_context
    from gpuwise.stability.changepoints import require_ruptures
    from gpuwise.stability.probes import default_layers, make_probe

    _check(opts)
    require_ruptures()  # before minutes of probing, not after
    ctx = build_context(BenchOptions(mode="quick", data_dir=opts.data_dir))
    layers = list(opts.layers) if opts.layers else default_layers(ctx, opts.peer)
    warnings = list(ctx.warnings)
    probes = []
    reader = ContextReader()
    try:
        for layer in layers:
            say(msg("starting the {layer} probe").format(layer=layer))
            try:
                probes.append(make_probe(layer, ctx, opts.data_dir, opts.peer))
            except Skip as exc:
                warnings.append(msg("{layer}: skipped ({why})").format(layer=layer, why=exc))
            except GpuwiseError as exc:
                if opts.layers:  # asked for by name: it must work
                    raise
                warnings.append(msg("{layer}: left out ({why})").format(layer=layer, why=exc.message))
        if not probes:
            raise UserInputError(msg("no probe could run here"), msg("see the warnings above; pick --layers"))
        started_unix = time.time()
        report = StabilityReport(
            host=socket.gethostname(),
            started_unix=started_unix,
            started=dt.datetime.fromtimestamp(started_unix, dt.timezone.utc).isoformat(timespec="seconds"),
            duration_s=opts.duration_s,
            interval_s=opts.interval_s,
            device=ctx.device,
            gpu_name=ctx.environment.get("catalog_gpu") or ctx.gpu_name,
            environment={k: v for k, v in ctx.environment.items() if k != "clocks_at_start"},
            signals={k: msg(v) for k, v in SIGNALS.items()},
            metrics=[m for p in probes for m in p.metrics],
            warnings=warnings,
        )
        if reader.cgroup:
            report.environment["cgroup_cpu_stat"] = f"{reader.cgroup[0]} ({reader.cgroup[1]})"
        failures = {p.layer: 0 for p in probes}
        t0, cpu0, probe_total = time.monotonic(), _cpu_seconds(), 0.0
        rounds = max(1, int(opts.duration_s / opts.interval_s + 1e-9))
        for i in range(rounds):
            delay = t0 + i * opts.interval_s - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            sample = Sample(t=round(time.monotonic() - t0, 3))
            reader.start()
            begin = time.monotonic()
            for probe in [p for p in probes if failures[p.layer] < MAX_FAILURES_IN_A_ROW]:
                try:
                    sample.values.update(probe.run())
                    failures[probe.layer] = 0
                except GpuwiseError as exc:
                    sample.errors[probe.layer] = exc.message
                    failures[probe.layer] += 1
                    if failures[probe.layer] == MAX_FAILURES_IN_A_ROW:
                        report.warnings.append(
                            msg("{layer}: dropped after {n} failures in a row ({why})").format(
                                layer=probe.layer, n=MAX_FAILURES_IN_A_ROW, why=exc.message
                            )
                        )
            sample.probe_s = round(time.monotonic() - begin, 4)
            sample.context = {k: (round(v, 4) if v is not None else None) for k, v in reader.stop().items()}
            probe_total += sample.probe_s
            report.samples.append(sample)
            say(msg("round {i}/{n} at {t:.0f} s").format(i=i + 1, n=rounds, t=sample.t))
        wall = max(time.monotonic() - t0, 1e-9)
        cpu = _cpu_seconds() - cpu0
        report.overhead = Overhead(
            wall_s=round(wall, 3),
            probe_s=round(probe_total, 3),
            probe_fraction=round(probe_total / wall, 4),
            cpu_s=round(cpu, 3),
            cpu_fraction_of_one_core=round(cpu / wall, 4),
        )
    finally:
        for p in probes:
            p.close()
        reader.close()
    return judge(report)
