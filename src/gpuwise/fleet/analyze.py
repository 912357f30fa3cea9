"""The offline fleet analysis: a fleet directory (layout.py) -> FleetReport (model.py).

Cost grows linearly with the number of nodes N: each node is read and its doctor rules run once
(the bulk of the time; in worker processes, one per CPU up to 8, from 64 nodes on); nodes are grouped by
GPU model and instance type (grouping.py) and drift is one pass over each group's values; each metric's median and MAD
sort N values (N log N, negligible next to the reading). The link test has at most 2N pairs above
eight nodes. Memory: each node is reduced to its summary (summary.py) as soon as it is read, so the
full facts and bench results of every node are never held at once. benchmarks/fleet_report_scale.py
measures both.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

from gpuwise.datafiles import shown_name
from gpuwise.documents.ids import LINKS_SCHEMA
from gpuwise.documents.links import LinksDocument
from gpuwise.documents.load import read_document
from gpuwise.errors import DataValidationError, UserInputError
from gpuwise.fleet.drift import drift_of
from gpuwise.fleet.grouping import group_nodes
from gpuwise.fleet.layout import (
    LAYOUT_FIX,
    NodeResult,
    Refused,
    fleet_entry,
    load_node,
    node_dirs,
    read_json_report,
)
from gpuwise.fleet.model import Collective, Distribution, Drift, FleetReport, NodeValue, Outlier
from gpuwise.fleet.outliers import Sample, bench_samples, find_outliers, scope_of
from gpuwise.fleet.reach import group_findings
from gpuwise.fleet.straggler import verdict
from gpuwise.fleet.summary import NodeSummary, read_summary, shared
from gpuwise.fleet.thresholds import thresholds
from gpuwise.i18n import N_, joined, msg

PARALLEL_FROM = 64  # below this many nodes, starting worker processes costs more than it saves


def analyze_fleet(directory: str | Path, run_rules: bool = True) -> FleetReport:
    """Read every node folder under `directory` and compare the nodes with each other."""
    root = Path(directory).expanduser()
    results = read_summaries(node_dirs(root), run_rules)
    refuse_unread(results, root)
    return analyze_results(results, root)


def refuse_unread(results: list[NodeSummary], root: Path) -> None:
    """UserInputError (exit 3) when no node gave a capture or a bench result: "no node differs from its
    peers" would be a verdict on no data. The message counts the nodes and groups their reasons."""
    if any(r.status.capture or r.bench is not None for r in results):
        return
    by_reason: dict[str, list[str]] = {}
    for r in results:
        reason = r.status.problems[0] if r.status.problems else msg("nothing to read")
        by_reason.setdefault(reason[:200], []).append(r.name)
    shown = []
    for reason, nodes in sorted(by_reason.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:3]:
        names = joined(", ", nodes[:3]) + (", ..." if len(nodes) > 3 else "")
        shown.append(msg("{reason} ({count}: {nodes})").format(reason=reason, count=len(nodes), nodes=names))
    if len(by_reason) > 3:
        shown.append(msg("{count} other reasons").format(count=len(by_reason) - 3))
    raise UserInputError(
        msg("{root}: no node could be read ({unread} of {total}: {reasons})").format(
            root=shown_name(root), unread=len(results), total=len(results), reasons=joined("; ", shown)
        ),
        msg(LAYOUT_FIX),
    )


def load_nodes(dirs: list[Path], run_rules: bool = True, workers: int | None = None) -> list[NodeResult]:
    """Read the nodes in full (every fact and measurement), in worker processes for a large fleet."""
    return _read_all(load_node, dirs, run_rules, workers)


def read_summaries(dirs: list[Path], run_rules: bool = True, workers: int | None = None) -> list[NodeSummary]:
    """Read the nodes and keep what the report compares (summary.py): memory grows by a few kB per node."""
    return [shared(s) for s in _read_all(read_summary, dirs, run_rules, workers)]


def _read_all(read, dirs: list[Path], run_rules: bool, workers: int | None) -> list:
    """read(d, run_rules) for every node folder, in worker processes for a large fleet (reading a
    capture is CPU-bound Python)."""
    workers = workers or min(os.cpu_count() or 1, 8)
    if len(dirs) < PARALLEL_FROM or workers < 2:
        return [read(d, run_rules) for d in dirs]
    from concurrent.futures import ProcessPoolExecutor
    from functools import partial

    # the workers write the nodes' problems in the language of the report (a spawned worker starts in English)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(partial(read, run_rules=run_rules), dirs, chunksize=16))


def analyze_results(results: list[NodeSummary], root: Path) -> FleetReport:
    groups = group_nodes((r.name, r.group) for r in results)
    by_name = {r.name: r for r in results}
    benches = {r.name: r.bench for r in results if r.bench is not None}
    drift: list[Drift] = []
    outliers: list[Outlier] = []
    distributions: list[Distribution] = []
    for g in groups:
        members = [by_name[n] for n in g.nodes]
        g.judged = len(members) > 1  # a group of one node is listed, not judged
        if not g.judged:
            continue
        for d in drift_of((r.name, r.values) for r in members if r.values is not None):
            d.node_group = g.name
            drift.append(d)
        group_benches = ((r.name, r.bench) for r in members if r.bench is not None)
        for (metric, unit), samples in sorted(bench_samples(group_benches).items()):
            for o in find_outliers(metric, unit, samples):
                o.node_group = g.name
                outliers.append(o)
            distributions.append(distribution(metric, unit, samples, node_group=g.name))
    collective = read_collective(root)
    if collective is not None:
        for metric, samples in link_samples(collective).items():
            outliers.extend(find_outliers(metric, "GB/s", samples, scope="link"))
            distributions.append(distribution(metric, "GB/s", samples, scope="link"))
    not_compared = []
    if len(benches) < len(results):
        not_compared.append(
            msg("{missing} of {total} nodes have no bench.json").format(
                missing=len(results) - len(benches), total=len(results)
            )
        )
    if collective is None:
        not_compared.append(msg("no collective.json or links.json: inter-node bandwidth not measured"))
    elif len({p["dst"] for p in collective.links}) == 2:
        not_compared.append(
            msg(
                "two nodes: one pair per direction, so a slow link cannot be pinned on either end; "
                "run the link test on three nodes or more"
            )
        )
    outliers.sort(key=lambda o: (o.node, o.metric, o.device or ""))
    return FleetReport(
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        directory=str(root),
        nodes=[r.status for r in results],
        drift=drift,
        outliers=outliers,
        distributions=distributions,
        reach=group_findings((r.name, r.findings) for r in results),
        collective=collective,
        groups=groups,
        straggler=verdict(benches, drift, outliers, groups),
        thresholds={
            t.name: {"value": float(t.value), "unit": t.unit, "source": t.source}
            for t in thresholds().values()
        },
        not_compared=not_compared,
    )


def read_collective(root: Path) -> Collective | None:
    """DIR/collective.json (the all-reduce) and DIR/links.json (pairwise), when either is there."""
    problems: list[str] = []
    report = read_json_report(root / "collective.json", problems)
    links = _read_links(root / "links.json", problems)
    if report is None and links is None and not problems:
        return None
    out = Collective(problems=problems, links=links or [])
    m = None
    if report is not None:
        m = report.find("allreduce_busbw") or next(
            (x for x in report.results if x.layer == "collective"), None
        )
    if m is not None:
        out.name, out.busbw_gb_s, out.backend = m.name, m.value, m.params.get("backend")
        out.algbw_gb_s = m.extra.get("algbw_plateau_gb_s")
        out.world_size, out.nodes = m.params.get("world_size"), m.params.get("nodes")
        out.per_rank_time_us = list(m.extra.get("per_rank_time_us") or [])
        out.slowest_rank = m.extra.get("slowest_rank")
        if m.status != "ok":
            out.problems.append(  # out holds a copy of the list (pydantic)
                msg("{name}: {status} ({reason})").format(name=m.name, status=m.status, reason=m.reason)
            )
    return out


def _read_links(path: Path, problems: list[str]) -> list[dict] | None:
    try:
        if fleet_entry(path.parent, path) is None:
            return None
    except Refused as exc:
        problems.append(str(exc))
        return None
    try:
        doc = read_document(path, LinksDocument, LINKS_SCHEMA, fix=LINKS_FIX, kind=N_("link test result"))
    except DataValidationError as exc:
        problems.append(msg("links.json: {error}").format(error=exc.reason[:200]))
        return None
    return [{"src": p.src, "dst": p.dst, "gb_s": p.gb_s, "best_gb_s": p.best_gb_s} for p in doc.pairs]


LINKS_FIX = N_("rerun `gpuwise fleet run`: its link test writes links.json")


def distribution(
    metric: str, unit: str, samples: list[Sample], scope: str | None = None, node_group: str | None = None
) -> Distribution:
    import statistics

    return Distribution(
        metric=metric,
        unit=unit,
        scope=scope or scope_of(samples[0][1]),
        node_group=node_group,
        median=statistics.median(v for _node, _device, v in samples),
        values=[NodeValue(node=n, device=d, value=v) for n, d, v in samples],
    )


def link_samples(collective: Collective) -> dict[str, list[Sample]]:
    """Each node's best pair per direction (its own link bounds every pair through it), to compare with its
    peers; none for a direction with fewer than three nodes (one pair each way cannot be pinned on either end).

    A pair's value is its best transfer (contention on the hosts only slows transfers down).
    """
    best: dict[str, dict[str, float]] = {"link_rx": {}, "link_tx": {}}
    for p in collective.links:
        best["link_rx"][p["dst"]] = max(best["link_rx"].get(p["dst"], 0.0), p["best_gb_s"])
        best["link_tx"][p["src"]] = max(best["link_tx"].get(p["src"], 0.0), p["best_gb_s"])
    return {
        f"{metric}_best_pair": [(node, None, v) for node, v in sorted(per_node.items())]
        for metric, per_node in best.items()
        if len(per_node) >= 3
    }


def link_outliers(collective: Collective) -> list[Outlier]:
    """The link directions that sit beyond the threshold on the bad side of their peers."""
    return [
        o
        for metric, samples in link_samples(collective).items()
        for o in find_outliers(metric, "GB/s", samples, scope="link")
    ]
