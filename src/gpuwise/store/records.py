"""What the history keeps of a run, read from its public JSON document (a plain dict).

bench (gpuwise-bench/1): one metric per benchmark that measured (status ok): its median, and the
min/max of its repeats; the facts are the run's `environment` without what changes every run
(clocks, warnings). doctor (gpuwise-report/1): the software stack, GPU models and kernel from its
facts, the finding counts per status, and the measurements it carries when it ran a bench.
tune (gpuwise-tune/1): the baseline's and the best trial's throughput and the winner's speedup, with
their 95% intervals, named tune/<workload>/...; the facts are the search's settings (the command adds
the software it ran with). fleet (gpuwise-fleet/1): the fleet's median of every metric with the
nodes' min and max, the counts of odd nodes, outliers and drift, the all-reduce busbw; the facts are
the majority value of whatever drifted. A fleet's identity is its set of node names (masked).
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


def tune_metrics(document: dict) -> list[Metric]:
    prefix = f"tune/{document.get('workload') or 'unknown'}"
    trials = {t.get("number"): t for t in document.get("trials") or [] if isinstance(t, dict)}
    baseline = next((t for t in trials.values() if t.get("role") == "baseline"), None)
    metrics = []
    for label, trial in (("baseline", baseline), ("best", trials.get(document.get("winner")))):
        if trial and isinstance(trial.get("samples_per_s"), (int, float)):
            metrics.append(
                Metric(f"{prefix}/{label}_samples_per_s", float(trial["samples_per_s"]), "samples/s",
                       trial.get("samples_per_s_low"), trial.get("samples_per_s_high"))
            )  # fmt: skip
    best = trials.get(document.get("winner"))
    if best and isinstance(best.get("speedup"), (int, float)):
        metrics.append(
            Metric(f"{prefix}/speedup", float(best["speedup"]), "x", best.get("speedup_low"),
                   best.get("speedup_high"))
        )  # fmt: skip
    return metrics


TUNE_FACTS = ("workload", "device", "nproc", "batch_size", "warmup_steps", "timed_steps", "keep_numerics")


def tune_facts(document: dict) -> dict:
    return {k: document.get(k) for k in TUNE_FACTS}


def fleet_metrics(document: dict) -> list[Metric]:
    metrics = []
    for d in document.get("distributions") or []:
        values = [v["value"] for v in d.get("values") or [] if isinstance(v.get("value"), (int, float))]
        if values and isinstance(d.get("median"), (int, float)):
            metrics.append(
                Metric(f"fleet/{d['metric']}", float(d["median"]), d.get("unit") or "", min(values),
                       max(values), len(values))
            )  # fmt: skip
    outliers = document.get("outliers") or []
    odd = {o.get("node") for o in outliers} | {
        n for d in document.get("drift") or [] for nodes in (d.get("odd") or {}).values() for n in nodes
    }
    metrics += [
        Metric("fleet/nodes", float(len(document.get("nodes") or [])), "count"),
        Metric("fleet/odd_nodes", float(len(odd)), "count"),
        Metric("fleet/outliers", float(len(outliers)), "count"),
        Metric("fleet/drift", float(len(document.get("drift") or [])), "count"),
    ]
    busbw = (document.get("collective") or {}).get("busbw_gb_s")
    if isinstance(busbw, (int, float)):
        metrics.append(Metric("fleet/allreduce_busbw", float(busbw), "GB/s"))
    return metrics


def fleet_facts(document: dict) -> dict:
    return {f"{d.get('group')}: {d.get('key')}": d.get("majority") for d in document.get("drift") or []}


def fleet_identity(document: dict) -> str:
    """The fleet's name for masking: its sorted node names (the same nodes are the same fleet)."""
    return "fleet:" + ",".join(sorted(str(n.get("node")) for n in document.get("nodes") or []))


def stability_metrics(document: dict) -> list[Metric]:
    """stability (gpuwise-stability/1): per metric its median (low/high: p5/p95) and its cv, so runs on
    different instances and days compare; stability/<metric>/cv is the spread itself."""
    metrics = []
    for r in document.get("results") or []:
        info, s = r.get("info") or {}, r.get("summary") or {}
        name = info.get("name")
        if not name or not isinstance(s.get("median"), (int, float)):
            continue
        metrics.append(
            Metric(f"stability/{name}", float(s["median"]), info.get("unit") or "", s.get("p5"), s.get("p95"),
                   s.get("n"))
        )  # fmt: skip
        if isinstance(s.get("cv"), (int, float)):
            ci = s.get("cv_ci") or [None, None]
            metrics.append(Metric(f"stability/{name}/cv", float(s["cv"]), "", ci[0], ci[1], s.get("n")))
    return metrics


def stability_facts(document: dict) -> dict:
    facts = {k: document.get(k) for k in ("device", "gpu_name", "interval_s", "duration_s")}
    facts["verdicts"] = {lv.get("layer"): lv.get("verdict") for lv in document.get("layers") or []}
    return facts


RECORDS = {  # kind -> (facts, metrics) of its JSON document
    "bench": (bench_facts, bench_metrics),
    "doctor": (doctor_facts, doctor_metrics),
    "tune": (tune_facts, tune_metrics),
    "fleet": (fleet_facts, fleet_metrics),
    "stability": (stability_facts, stability_metrics),
}
