"""Whose data a run is: the GPU model its numbers were measured on, and whether it was measured here
(live) or read back from another machine's files (replay: `doctor --from CAPTURE`, or a bench file
from another host passed with --bench-results). Read from the run's public JSON document (a plain dict).

Imports nothing from gpuwise: history.py uses it to fill these in for runs recorded before they
were columns (migration 2).
"""

from __future__ import annotations

import hashlib

LIVE = "live"
REPLAY = "replay"
NO_GPU = "none"  # the run saw no GPU (a CPU-only machine)


def mask_host(hostname: str) -> str:
    """A stable id for a host that does not reveal its name (the same name always gives the same id)."""
    return "host-" + hashlib.sha256(hostname.strip().lower().encode()).hexdigest()[:12]


def _models(names) -> str:
    names = sorted({str(n) for n in names or [] if n})
    return " + ".join(names) if names else NO_GPU


def bench_gpu(document: dict) -> str:
    """The GPU model(s) of a gpuwise-bench/1 document (its environment.gpus); NO_GPU when it had none."""
    env = document.get("environment") if isinstance(document.get("environment"), dict) else {}
    return _models(env.get("gpus") if isinstance(env.get("gpus"), list) else [])


def doctor_gpu(document: dict) -> str:
    """The GPU model(s) in a gpuwise-report/1 document's facts."""
    facts = document.get("facts") if isinstance(document.get("facts"), dict) else {}
    gpus = facts.get("gpus") if isinstance(facts.get("gpus"), list) else []
    return _models(g.get("name") for g in gpus if isinstance(g, dict))


def doctor_origin(document: dict) -> str:
    """REPLAY when the facts were read from a capture (`source` is its path, not "live") or the measurements it carries
    come from another host or GPU model than its facts; LIVE otherwise."""
    if document.get("source") not in (None, "", "live"):  # a live probe's facts say source "live"
        return REPLAY
    bench = document.get("measurements")
    if isinstance(bench, dict) and bench.get("results"):
        host, bench_host = (str(d.get("hostname") or "").strip().lower() for d in (document, bench))
        if host != bench_host or bench_gpu(bench) != doctor_gpu(document):
            return REPLAY
    return LIVE


def gpu_of(kind: str, document: dict) -> str:
    """The GPU model a run's numbers come from; '' for kinds that do not have one (tune, fleet)."""
    if kind == "bench":
        return bench_gpu(document)
    if kind == "doctor":
        return doctor_gpu(document)
    return ""


def origin_of(kind: str, document: dict) -> str:
    return doctor_origin(document) if kind == "doctor" else LIVE
