"""Fleet views: FleetReport -> Document (`fleet report`, `fleet run`), HealthResult -> Document (`fleet healthcheck`)."""

from __future__ import annotations

import re

from gpuwise.fleet.healthcheck import HealthResult
from gpuwise.fleet.model import FleetReport
from gpuwise.report.document import (
    Block,
    Bullets,
    Code,
    Column,
    Document,
    Heading,
    KeyValues,
    Paragraph,
    Styled,
    Table,
)
from gpuwise.report.views.charts import fleet_distribution_chart

HEALTH_SCHEMA = "gpuwise-fleet-health/1"


def _num(x: float | None, unit: str = "") -> str:
    return "—" if x is None else f"{x:.4g}{(' ' + unit) if unit else ''}"


def fleet_view(r: FleetReport) -> Document:
    odd = r.odd_nodes()
    blocks: list = [
        KeyValues(
            [
                ("directory", r.directory),
                ("nodes", str(len(r.nodes))),
                (
                    "verdict",
                    Styled(f"{len(odd)} odd node(s): {', '.join(odd)}", "warn")
                    if odd
                    else Styled("no node differs from its peers", "ok"),
                ),
            ]
        )
    ]
    problems = [(n.node, "; ".join(n.problems)) for n in r.nodes if n.problems]
    if problems:
        blocks += [
            Heading("Nodes that could not be read fully", 2),
            Table([Column("node"), Column("problem")], [[n, Styled(p, "warn")] for n, p in problems]),
        ]
    blocks.append(Heading("Drift (differs between nodes)", 2))
    if r.drift:
        rows = [
            [d.group, d.key, f"{d.majority} ({d.majority_count})", Styled(_odd_text(d.odd), "warn")]
            for d in r.drift
        ]
        blocks.append(
            Table([Column("group"), Column("what"), Column("majority (nodes)"), Column("odd")], rows)
        )
    else:
        blocks.append(
            Paragraph("Versions, firmware, kernel, hardware and key settings match on every node.", "ok")
        )
    blocks.append(Heading("Peer-relative outliers (bad side only)", 2))
    if r.outliers:
        rows = [
            [
                o.node + (f" {o.device}" if o.device and o.scope == "gpu" else ""),
                o.metric,
                Styled(_num(o.value, o.unit), "fail"),
                _num(o.median, o.unit),
                f"{o.deviation_pct:+.1f}%",
                f"z={o.score:+.1f}" if o.score is not None else o.method,
            ]
            for o in r.outliers
        ]
        cols = [Column("node"), Column("metric"), Column("value", "right"), Column("fleet median", "right")]
        blocks.append(Table([*cols, Column("dev", "right"), Column("score")], rows))
    else:
        blocks.append(Paragraph("No measurement is an outlier on the bad side.", "ok"))
    z = r.thresholds.get("robust_z_threshold", {})
    if z:
        url = re.search(r"https?://[^\s),]+", z["source"])
        blocks.append(
            Paragraph(
                f"Outlier: robust z = (x - median) / (1.4826 MAD) beyond -{z['value']:g} (+ for times); "
                f"under {r.thresholds['min_nodes_for_z']['value']:g} nodes, below "
                f"{r.thresholds['small_fleet_ratio']['value']:g}x the others' median. Threshold: "
                f"Iglewicz and Hoaglin, NIST/SEMATECH e-Handbook 1.3.5.17{f' ({url.group(0)})' if url else ''}.",
                "dim",
            )
        )
    blocks += _spread_blocks(r)
    if r.collective is not None:
        blocks += _collective_blocks(r)
    blocks.append(Heading("Findings by reach", 2))
    if r.reach:
        n = len(r.nodes)
        rows = [
            [
                f"{len(g.nodes)}/{n}",
                Styled(g.status, {"fail": "fail", "warn": "warn"}.get(g.status, "info")),
                g.id,
                g.title,
                "all" if len(g.nodes) == n else _short_list(g.nodes),
            ]
            for g in r.reach
        ]
        blocks.append(
            Table([Column("reach"), Column("status"), Column("id"), Column("finding"), Column("nodes")], rows)
        )
    else:
        blocks.append(Paragraph("No doctor findings.", "ok"))
    blocks += _straggler_blocks(r)
    if r.not_compared:
        blocks += [Heading("Not compared", 2), Bullets(list(r.not_compared))]
    return Document(title="gpuwise fleet report", blocks=blocks, data=r.to_json_dict())


def _spread_blocks(r: FleetReport) -> list[Block]:
    """Each metric's spread over the nodes (every value is in the JSON's distributions), and its chart."""
    if not r.distributions:
        return []
    flagged: dict[str, int] = {}
    for o in r.outliers:
        flagged[o.metric] = flagged.get(o.metric, 0) + 1
    rows = []
    for d in r.distributions:
        values = [v.value for v in d.values]
        n = flagged.get(d.metric, 0)
        rows.append([d.metric, d.unit, str(len(values)), _num(min(values)), _num(d.median), _num(max(values)),
                     Styled(str(n), "fail") if n else "0"])  # fmt: skip
    columns = [Column("metric"), Column("unit"), Column("values", "right"), Column("min", "right"),
               Column("median", "right"), Column("max", "right"), Column("outliers", "right")]  # fmt: skip
    return [
        Heading("Spread per metric", 2),
        Table(
            columns, rows, caption="values: one per node (per GPU for GPU metrics, per direction for links)"
        ),
        *fleet_distribution_chart(r),
    ]


def _odd_text(odd: dict[str, list[str]]) -> str:
    return "; ".join(f"{v}: {_short_list(ns)}" for v, ns in odd.items())


def _short_list(nodes: list[str], limit: int = 8) -> str:
    return ", ".join(nodes) if len(nodes) <= limit else ", ".join(nodes[:limit]) + f" (+{len(nodes) - limit})"


def _collective_blocks(r: FleetReport) -> list:
    c = r.collective
    rows = [
        ("all-reduce busbw", _num(c.busbw_gb_s, "GB/s")),
        ("ranks / nodes", f"{c.world_size or '—'} / {c.nodes or '—'} ({c.backend or '?'})"),
        ("per-rank time (largest size)", ", ".join(f"{t:.0f} us" for t in c.per_rank_time_us) or "—"),
    ]
    out: list = [Heading("Inter-node collective", 2), KeyValues(rows)]
    if c.links:
        out.append(
            Table(
                [Column("from"), Column("to"), Column("median GB/s", "right"), Column("best GB/s", "right")],
                [[p["src"], p["dst"], f"{p['gb_s']:.3f}", f"{p['best_gb_s']:.3f}"] for p in c.links],
                title="pairwise link test",
            )
        )
    if c.problems:
        out.append(Bullets([Styled(p, "warn") for p in c.problems]))
    return out


def _straggler_blocks(r: FleetReport) -> list:
    s = r.straggler
    out: list = [Heading("Straggler verdict for the next job", 2)]
    if not s.exclude:
        out.append(Paragraph("Keep every node.", "ok"))
    else:
        out.append(
            Table([Column("exclude"), Column("why")], [[n, "; ".join(s.reasons[n])] for n in s.exclude])
        )
        out.append(Code([s.sbatch_line or ""], "bash"))
    if s.step_ms_all is not None:
        out.append(
            KeyValues(
                [
                    (
                        "step time, all nodes",
                        f"{s.step_ms_all:.4g} ms ({s.throughput_all:g} median-node units)",
                    ),
                    (
                        "step time, without excluded",
                        f"{_num(s.step_ms_without, 'ms')} ({_num(s.throughput_without)} median-node units)",
                    ),
                    ("from", s.step_metric or "—"),
                ],
            )
        )
        out.append(Paragraph(f"Estimate: {s.method}.", "dim"))
    return out


def health_data(h: HealthResult) -> dict:
    return {
        "schema": HEALTH_SCHEMA,
        "node": h.node,
        "healthy": not h.critical,
        "exit_code": h.exit_code,
        "drained": h.drained,
        "drain_error": h.drain_error,
        "seconds": round(h.seconds, 3),
        "findings": [
            f.model_dump(mode="json") for f in h.findings if f.status != "pass" or f.id.startswith("expect.")
        ],
    }


def health_view(h: HealthResult) -> Document:
    crit = h.critical
    verdict = Styled(f"CRITICAL: {len(crit)} finding(s)", "fail") if crit else Styled("healthy", "ok")
    rows = [("node", h.node), ("verdict", verdict), ("took", f"{h.seconds:.2f} s")]
    if h.drained:
        rows.append(("drained", Styled("yes (scontrol update state=drain)", "warn")))
    if h.drain_error:
        rows.append(("drain failed", Styled(h.drain_error, "fail")))
    blocks: list = [KeyValues(rows)]
    shown = [f for f in h.findings if f.status == "fail" or f.id.startswith("expect.")]
    if shown:
        blocks.append(
            Table(
                [Column("status"), Column("id"), Column("finding")],
                [[Styled(f.status, "fail" if f.status == "fail" else "ok"), f.id, f.title] for f in shown],
            )
        )
    return Document(title="gpuwise fleet healthcheck", blocks=blocks, data=health_data(h))
