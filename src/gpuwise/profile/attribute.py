"""Attribute step time from a Chrome/Kineto trace: gpuwise's phase labels, collectives, ops, GPU kernels.

Each `ProfilerStep#N` span is one step. Within it, the time under gpuwise's labels (gpuwise/data,
/forward, /backward, /optimizer) gives the phases; collective ops (any event whose name holds
"allreduce"/"all_reduce") are merged into one interval set, so overlapping calls count once; the rest
of the step is "other" (the loop's own Python). GPU kernels and memcpys, when present, feed the
launch-bound and host-to-device checks.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from gpuwise.datafiles import read_input_text
from gpuwise.errors import DataValidationError
from gpuwise.i18n import N_, msg
from gpuwise.profile.model import Phase, TopOp

LABELS = ("data", "forward", "backward", "optimizer")
SHORT_KERNEL_US = 10.0  # kernels shorter than this are launch-overhead sized (a CUDA launch costs ~5-20 us)


@dataclass
class Breakdown:
    steps: int
    step_ms: float
    phases: list[Phase]
    top_ops: list[TopOp] = field(default_factory=list)
    gpu: dict = field(default_factory=dict)

    def fraction(self, name: str) -> float:
        return next((p.fraction for p in self.phases if p.name == name), 0.0)


def _union(intervals: list[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def load_events(path: Path) -> list[dict]:
    from gpuwise.errors import UserInputError

    try:
        data = json.loads(read_input_text(path, N_("trace")))  # regular files, size cap: a FIFO never blocks
    except DataValidationError as exc:
        raise UserInputError(
            msg("cannot read trace {path}: {exc}").format(path=path, exc=exc.reason),
            fix=msg("pass a Chrome/Kineto JSON trace"),
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserInputError(
            msg("cannot read trace {path}: {exc}").format(path=path, exc=exc),
            fix=msg("pass a Chrome/Kineto JSON trace"),
        ) from None
    events = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(events, list):
        raise UserInputError(
            msg("{path} has no traceEvents list").format(path=path),
            fix=msg("pass a Chrome/Kineto JSON trace"),
        )
    return [
        e
        for e in events
        if isinstance(e, dict) and e.get("ph") == "X" and isinstance(e.get("dur"), (int, float))
    ]


def attribute(path: Path) -> Breakdown:
    from gpuwise.errors import UserInputError

    events = load_events(path)
    steps = [e for e in events if str(e.get("name", "")).startswith("ProfilerStep#")]
    if not steps:
        raise UserInputError(
            msg("{path} has no ProfilerStep spans").format(path=path),
            fix=msg("profile with torch.profiler's schedule and prof.step() per step"),
        )
    total_us = sum(s["dur"] for s in steps)
    sums: dict[str, float] = defaultdict(float)
    comm: list[tuple[float, float]] = []
    ops: dict[str, list[float]] = defaultdict(list)
    kernels: list[tuple[float, float]] = []
    memcpy: dict[str, float] = defaultdict(float)
    windows = [(s["ts"], s["ts"] + s["dur"]) for s in steps]

    def inside(e) -> bool:
        return any(a <= e["ts"] <= b for a, b in windows)

    for e in events:
        name, cat = str(e.get("name", "")), e.get("cat")
        if cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            if cat == "kernel":
                kernels.append((e["ts"], e["ts"] + e["dur"]))
            elif cat == "gpu_memcpy":
                memcpy[name] += e["dur"]
            continue
        if not inside(e):
            continue
        if name.startswith("gpuwise/") and name[8:] in LABELS:
            sums[name[8:]] += e["dur"]
        lowered = name.lower()
        if "allreduce" in lowered or "all_reduce" in lowered:
            comm.append((e["ts"], e["ts"] + e["dur"]))
        if cat == "cpu_op":
            ops[name].append(e["dur"])
    n = len(steps)
    phases = [Phase(name=k, ms_per_step=sums[k] / n / 1e3, fraction=sums[k] / total_us) for k in LABELS]
    comm_us = _union(comm)
    phases.append(Phase(name="all-reduce", ms_per_step=comm_us / n / 1e3, fraction=comm_us / total_us))
    other = max(0.0, total_us - sum(sums.values()))
    phases.append(Phase(name="other", ms_per_step=other / n / 1e3, fraction=other / total_us))
    top = sorted(ops.items(), key=lambda kv: -sum(kv[1]))[:8]
    top_ops = [TopOp(name=k, calls_per_step=len(v) / n, ms_per_step=sum(v) / n / 1e3) for k, v in top]
    gpu = {}
    if kernels:
        durations = sorted(b - a for a, b in kernels)
        gpu = {
            "kernels_per_step": len(kernels) / n,
            "busy_fraction": _union(kernels) / total_us,
            "median_kernel_us": durations[len(durations) // 2],
            "short_kernel_fraction": sum(d < SHORT_KERNEL_US for d in durations) / len(durations),
            "memcpy_ms_per_step": {k: v / n / 1e3 for k, v in memcpy.items()},
        }
    return Breakdown(steps=n, step_ms=total_us / n / 1e3, phases=phases, top_ops=top_ops, gpu=gpu)
