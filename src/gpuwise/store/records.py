"""What the history keeps of a run, read from its public JSON document (a plain dict).

bench (gpuwise-bench/1): one metric per benchmark that measured (status ok): its median, and the
min/max of its repeats; the facts are the run's `environment` without what changes every run
(clocks, warnings). doctor (gpuwise-report/1): the software stack, GPU models and kernel from its
facts, the finding counts per status, and the measurements it carries when it ran a bench.
"""

from __future__ import annotations

from gpuwise.store.history import Metric

VOLATILE_ENVIRONMENT = {"clocks_at_start", "warnings", "hostname", "torch_threads", "cuda_visible_devices"}


def bench_metrics(document: dict) -> list[Metric]:
    metrics = []
    for result in document.get("results") or []:
        value = result.get("value")
        if result.get("status") != "ok" or not isinstance(value, (int, float)) or not result.get("name"):
            continue
        stats = result.get("stats") or {}
        metrics.append(
            Metric(
                name=result["name"],
                value=float(value),
                unit=result.get("unit") or "",
                low=stats.get("min"),
                high=stats.get("max"),
                repeats=stats.get("repeats"),
            )
        )
    return metrics


def bench_facts(document: dict) -> dict:
    env = document.get("environment") or {}
    return {k: v for k, v in sorted(env.items()) if k not in VOLATILE_ENVIRONMENT}


def doctor_facts(document: dict) -> dict:
    facts = document.get("facts") or {}
    software = facts.get("software") or {}
    out = {k: v for k, v in sorted(software.items()) if isinstance(v, (str, int, float, bool)) or v is None}
    out["gpus"] = [g.get("name") for g in facts.get("gpus") or [] if isinstance(g, dict)]
    kernel = facts.get("kernel") or {}
    if isinstance(kernel, dict) and kernel.get("release"):
        out["kernel"] = kernel["release"]
    return out


def doctor_metrics(document: dict) -> list[Metric]:
    by_status = (document.get("summary") or {}).get("by_status") or {}
    metrics = [Metric(f"findings_{status}", float(n), "count") for status, n in sorted(by_status.items())]
    return metrics + bench_metrics(document.get("measurements") or {})


def hostname_of(document: dict) -> str:
    return str(document.get("hostname") or (document.get("environment") or {}).get("hostname") or "unknown")
