"""Whose data a run is: the GPU model its numbers were measured on, and whether it was measured here
(live) or read back from another machine's files (replay: `doctor --from CAPTURE`, or a bench file
from another host passed with --bench-results). Read from the run's document, validated with its model
(gpuwise.documents).

history.py uses it to fill these in for runs recorded before they were columns (migration 2).
"""

from __future__ import annotations

import hashlib

from gpuwise.documents.bench import BenchReport
from gpuwise.documents.doctor import DoctorReport
from gpuwise.i18n import joined

LIVE = "live"
REPLAY = "replay"
NO_GPU = "none"  # the run saw no GPU (a CPU-only machine)


def mask_host(hostname: str) -> str:
    """A stable id for a host that does not reveal its name (the same name always gives the same id)."""
    return "host-" + hashlib.sha256(hostname.strip().lower().encode()).hexdigest()[:12]


def _models(names) -> str:
    names = sorted({str(n) for n in names or [] if n})
    return joined(" + ", names) if names else NO_GPU


def bench_gpu(report: BenchReport) -> str:
    """The GPU model(s) of a bench document (its environment.gpus); NO_GPU when it had none."""
    return _models(report.gpu_names())


def doctor_gpu(report: DoctorReport) -> str:
    """The GPU model(s) in a doctor report's facts."""
    return _models(g.name for g in report.facts.gpus)


def doctor_origin(report: DoctorReport) -> str:
    """REPLAY when the facts were read from a capture (`source` is its path, not "live") or the measurements it carries
    come from another host or GPU model than its facts; LIVE otherwise."""
    if report.source not in (None, "", "live"):  # a live probe's facts say source "live"
        return REPLAY
    bench = report.measurements
    if bench is not None and bench.results:
        host, bench_host = (str(h or "").strip().lower() for h in (report.hostname, bench.hostname))
        if host != bench_host or bench_gpu(bench) != doctor_gpu(report):
            return REPLAY
    return LIVE


def gpu_of(document: object) -> str:
    """The GPU model a run's numbers come from; '' for kinds that do not have one (tune, fleet, stability)."""
    if isinstance(document, BenchReport):
        return bench_gpu(document)
    if isinstance(document, DoctorReport):
        return doctor_gpu(document)
    return ""


def origin_of(document: object) -> str:
    return doctor_origin(document) if isinstance(document, DoctorReport) else LIVE
