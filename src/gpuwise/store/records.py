"""What the history keeps of a run, read from its public JSON document through the document's model
(gpuwise.documents): a document that does not validate is a DocumentError naming the first bad field.

bench (BENCH_SCHEMA): one metric per benchmark that measured (status ok): its median, and the
min/max of its repeats; the facts are the run's `environment` without what changes every run
(clocks, warnings). doctor (REPORT_SCHEMA): the software stack, GPU models and kernel from its
facts, the finding counts per status, and the measurements it carries when it ran a bench.
tune (TUNE_SCHEMA): the baseline's and the best trial's throughput and the winner's speedup, with
their 95% intervals, named tune/<workload>/...; the facts are the search's settings (the command adds
the software it ran with). fleet (FLEET_SCHEMA): the fleet's median of every metric with the
nodes' min and max, the counts of odd nodes, outliers and drift, the all-reduce busbw; the facts are
the majority value of whatever drifted. A fleet's identity is its set of node names (masked).
stability (STABILITY_SCHEMA): per metric its median, p5/p95 and cv; the facts are the run's settings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpuwise.documents.bench import BenchReport
from gpuwise.documents.doctor import DoctorReport
from gpuwise.documents.fleet import FleetDocument
from gpuwise.documents.ids import BENCH_SCHEMA, FLEET_SCHEMA, REPORT_SCHEMA, STABILITY_SCHEMA, TUNE_SCHEMA
from gpuwise.documents.load import parse_document
from gpuwise.documents.stability import StabilityDocument
from gpuwise.documents.tune import TuneDocument
from gpuwise.i18n import N_, joined
from gpuwise.store.history import Metric
from gpuwise.store.identity import gpu_of, origin_of

VOLATILE_ENVIRONMENT = {"clocks_at_start", "warnings", "hostname", "torch_threads", "cuda_visible_devices"}
RECORD_FIX = N_(
    "the run's own output is complete; pass --no-history to skip recording, and report this mismatch"
)


@dataclass(frozen=True)
class Kind:
    """One kind of run: the document's schema id and model, and what the history keeps of it."""

    schema: str
    model: type
    facts: Callable[[Any], dict]
    metrics: Callable[[Any], list[Metric]]


def parse(kind: str, document: object, where: str = "history") -> Any:
    """The run's document validated with its kind's model (DocumentError when it does not fit)."""
    k = RECORDS[kind]
    return parse_document(document, k.model, k.schema, path=where, fix=RECORD_FIX)


def _bench_metrics(report: BenchReport) -> list[Metric]:
    return [
        Metric(
            name=m.name,
            value=float(m.value),
            unit=m.unit or "",
            low=m.stats.min if m.stats else None,
            high=m.stats.max if m.stats else None,
            repeats=m.stats.repeats if m.stats else None,
        )
        for m in report.results
        # a file of an older gpuwise can hold a headline outside its own samples: invalid by today's rule
        if m.status == "ok" and m.value is not None and m.name and not m.headline_outside_stats()
    ]


def _bench_facts(report: BenchReport) -> dict:
    return {k: v for k, v in sorted(report.environment.items()) if k not in VOLATILE_ENVIRONMENT}


def _doctor_facts(report: DoctorReport) -> dict:
    software = report.facts.software
    out = {k: v for k, v in sorted(software.items()) if isinstance(v, (str, int, float, bool)) or v is None}
    out["gpus"] = [g.name for g in report.facts.gpus]
    if report.facts.kernel and report.facts.kernel.release:
        out["kernel"] = report.facts.kernel.release
    return out


def _doctor_metrics(report: DoctorReport) -> list[Metric]:
    by_status = report.summary.by_status
    metrics = [Metric(f"findings_{status}", float(n), "count") for status, n in sorted(by_status.items())]
    return metrics + (_bench_metrics(report.measurements) if report.measurements else [])


def _tune_metrics(result: TuneDocument) -> list[Metric]:
    prefix = f"tune/{result.workload or 'unknown'}"
    best = result.trial(result.winner)
    metrics = []
    for label, trial in (("baseline", result.baseline()), ("best", best)):
        if trial and trial.samples_per_s is not None:
            metrics.append(
                Metric(f"{prefix}/{label}_samples_per_s", float(trial.samples_per_s), "samples/s",
                       trial.samples_per_s_low, trial.samples_per_s_high)
            )  # fmt: skip
    if best and best.speedup is not None:
        metrics.append(
            Metric(f"{prefix}/speedup", float(best.speedup), "x", best.speedup_low, best.speedup_high)
        )
    return metrics


TUNE_FACTS = ("workload", "device", "nproc", "batch_size", "warmup_steps", "timed_steps", "keep_numerics")


def _tune_facts(result: TuneDocument) -> dict:
    return {k: getattr(result, k) for k in TUNE_FACTS}


def _fleet_metrics(report: FleetDocument) -> list[Metric]:
    metrics = []
    for d in report.distributions:
        values = [v.value for v in d.values if v.value is not None]
        if values and d.median is not None:
            metrics.append(
                Metric(
                    f"fleet/{d.metric}", float(d.median), d.unit or "", min(values), max(values), len(values)
                )
            )
    odd = {o.node for o in report.outliers} | {
        n for d in report.drift for nodes in d.odd.values() for n in nodes
    }
    metrics += [
        Metric("fleet/nodes", float(len(report.nodes)), "count"),
        Metric("fleet/odd_nodes", float(len(odd)), "count"),
        Metric("fleet/outliers", float(len(report.outliers)), "count"),
        Metric("fleet/drift", float(len(report.drift)), "count"),
    ]
    if report.collective and report.collective.busbw_gb_s is not None:
        metrics.append(Metric("fleet/allreduce_busbw", float(report.collective.busbw_gb_s), "GB/s"))
    return metrics


def _fleet_facts(report: FleetDocument) -> dict:
    return {f"{d.group}: {d.key}": d.majority for d in report.drift}


def _stability_metrics(report: StabilityDocument) -> list[Metric]:
    """Per metric its median (low/high: p5/p95) and its cv, so runs on different instances and days
    compare; stability/<metric>/cv is the spread itself."""
    metrics = []
    for r in report.results:
        s = r.summary
        if s.median is None:
            continue
        metrics.append(Metric(f"stability/{r.info.name}", float(s.median), r.info.unit, s.p5, s.p95, s.n))
        if s.cv is not None:
            low, high = s.cv_ci or (None, None)
            metrics.append(Metric(f"stability/{r.info.name}/cv", float(s.cv), "", low, high, s.n))
    return metrics


def _stability_facts(report: StabilityDocument) -> dict:
    facts: dict = {k: getattr(report, k) for k in ("device", "gpu_name", "interval_s", "duration_s")}
    facts["verdicts"] = {lv.layer: lv.verdict for lv in report.layers}
    return facts


RECORDS = {  # kind -> its document and what the history keeps of it
    "bench": Kind(BENCH_SCHEMA, BenchReport, _bench_facts, _bench_metrics),
    "doctor": Kind(REPORT_SCHEMA, DoctorReport, _doctor_facts, _doctor_metrics),
    "tune": Kind(TUNE_SCHEMA, TuneDocument, _tune_facts, _tune_metrics),
    "fleet": Kind(FLEET_SCHEMA, FleetDocument, _fleet_facts, _fleet_metrics),
    "stability": Kind(STABILITY_SCHEMA, StabilityDocument, _stability_facts, _stability_metrics),
}


def facts_of(kind: str, document: object) -> dict:
    return RECORDS[kind].facts(parse(kind, document))


def metrics_of(kind: str, document: object) -> list[Metric]:
    return RECORDS[kind].metrics(parse(kind, document))


@dataclass(frozen=True)
class RunSummary:
    """What the history keeps of one run's document."""

    facts: dict
    metrics: list[Metric]
    hostname: str  # bench and doctor documents say; else "unknown"
    created_at: str | None
    gpu: str
    origin: str


def summarize(kind: str, document: object) -> RunSummary:
    doc, k = parse(kind, document), RECORDS[kind]
    hostname = doc.host() if isinstance(doc, BenchReport) else getattr(doc, "hostname", None)
    return RunSummary(
        facts=k.facts(doc),
        metrics=k.metrics(doc),
        hostname=str(hostname or "unknown"),
        created_at=getattr(doc, "created_at", None),
        gpu=gpu_of(doc),
        origin=origin_of(doc),
    )


def fleet_identity(document: object) -> str:
    """The fleet's name for masking: its sorted node names (the same nodes are the same fleet)."""
    report = parse("fleet", document)
    return "fleet:" + joined(",", sorted(n.node for n in report.nodes))
