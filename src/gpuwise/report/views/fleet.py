"""Fleet views: FleetReport -> Document (`fleet report`, `fleet run`), HealthResult -> Document (`fleet healthcheck`)."""

from __future__ import annotations

import re

from gpuwise.documents.ids import FLEET_HEALTH_SCHEMA as HEALTH_SCHEMA
from gpuwise.fleet.healthcheck import HealthResult
from gpuwise.fleet.model import FleetReport
from gpuwise.i18n import C_, N_, _, shows, worded
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

# the JSON's enum values, shown in the reader's language
OUTLIER_METHOD = {"robust z": N_("robust z"), "vs others' median": N_("vs others' median")}


def _group(group: str) -> str:
    """A drift group (software, firmware, kernel, hardware, settings) in the reader's language."""
    words = {
        "software": C_("drift group", "software"),
        "firmware": C_("drift group", "firmware"),
        "kernel": C_("drift group", "kernel"),
        "hardware": C_("drift group", "hardware"),
        "settings": C_("drift group", "settings"),
    }
    return words.get(group, group)


def _status(status: str) -> str:
    """A finding's status (the JSON's enum value) in the reader's language."""
    words = {
        "fail": C_("finding status", "fail"),
        "warn": C_("finding status", "warn"),
        "info": C_("finding status", "info"),
        "pass": C_("finding status", "pass"),
    }
    return words.get(status, status)


def _num(x: float | None, unit: str = "") -> str:
    return "—" if x is None else f"{x:.4g}{(' ' + unit) if unit else ''}"


@shows
def fleet_view(r: FleetReport) -> Document:
    data = r.to_json_dict()  # from the model as it is: JSON stays English under every --lang
    r = worded(r)
    odd = r.odd_nodes()
    blocks: list = [
        KeyValues(
            [
                (_("directory"), r.directory),
                (C_("count", "nodes"), str(len(r.nodes))),
                *_mixed_rows(r),
                (
                    _("verdict"),
                    Styled(
                        _("{count} odd node(s): {nodes}").format(count=len(odd), nodes=", ".join(odd)), "warn"
                    )
                    if odd
                    else Styled(_("no node differs from its peers"), "ok"),
                ),
            ]
        )
    ]
    problems = [(n.node, "; ".join(n.problems)) for n in r.nodes if n.problems]
    if problems:
        blocks += [
            Heading(_("Nodes that could not be read fully"), 2),
            Table([Column(_("node")), Column(_("problem"))], [[n, Styled(p, "warn")] for n, p in problems]),
        ]
    blocks.append(Heading(_("Drift (differs between nodes)"), 2))
    if r.drift:
        rows = [
            [
                *([d.node_group or ""] if _mixed(r) else []),
                _group(d.group),
                d.label or d.key,
                f"{d.majority} ({d.majority_count})",
                Styled(_odd_text(d.odd), "warn"),
            ]
            for d in r.drift
        ]
        columns = [Column(_("group")), Column(_("what")), Column(_("majority (nodes)")), Column(_("odd"))]
        if _mixed(r):
            columns.insert(0, Column(_("node group")))
        blocks.append(Table(columns, rows))
    else:
        blocks.append(
            Paragraph(_("Versions, firmware, kernel, hardware and key settings match on every node."), "ok")
        )
    blocks.append(Heading(_("Peer-relative outliers (bad side only)"), 2))
    if r.outliers:
        rows = [
            [
                *([o.node_group or C_("scope", "links")] if _mixed(r) else []),
                o.node + (f" {o.device}" if o.device and o.scope == "gpu" else ""),
                o.metric,
                Styled(_num(o.value, o.unit), "fail"),
                _num(o.median, o.unit),
                f"{o.deviation_pct:+.1f}%",
                f"z={o.score:+.1f}" if o.score is not None else _(OUTLIER_METHOD.get(o.method, o.method)),
            ]
            for o in r.outliers
        ]
        cols = [Column(_("node")), Column(_("metric")), Column(_("value"), "right"),
                Column(_("fleet median"), "right"), Column(_("dev"), "right"), Column(_("score"))]  # fmt: skip
        if _mixed(r):
            cols[3] = Column(_("group median"), "right")
            cols.insert(0, Column(_("node group")))
        blocks.append(Table(cols, rows))
    else:
        blocks.append(Paragraph(_("No measurement is an outlier on the bad side."), "ok"))
    z = r.thresholds.get("robust_z_threshold", {})
    if z:
        url = re.search(r"https?://[^\s),]+", z["source"])
        text = _(
            "Outlier: robust z = (x - median) / (1.4826 MAD) beyond -{z:g} (+ for times); under {nodes:g} "
            "nodes, below {ratio:g}x the others' median. Threshold: {source}{url}."
        ).format(
            z=z["value"],
            nodes=r.thresholds["min_nodes_for_z"]["value"],
            ratio=r.thresholds["small_fleet_ratio"]["value"],
            source="Iglewicz and Hoaglin, NIST/SEMATECH e-Handbook 1.3.5.17",
            url=f" ({url.group(0)})" if url else "",
        )
        blocks.append(Paragraph(text, "dim"))
    blocks += _spread_blocks(r)
    if r.collective is not None:
        blocks += _collective_blocks(r)
    blocks.append(Heading(_("Findings by reach"), 2))
    if r.reach:
        n = len(r.nodes)
        rows = [
            [
                f"{len(g.nodes)}/{n}",
                Styled(_status(g.status), {"fail": "fail", "warn": "warn"}.get(g.status, "info")),
                g.id,
                g.title,
                C_("nodes", "all") if len(g.nodes) == n else _short_list(g.nodes),
            ]
            for g in r.reach
        ]
        columns = [Column(_("reach")), Column(_("status")), Column("id"), Column(_("finding")),
                   Column(C_("list", "nodes"))]  # fmt: skip
        blocks.append(Table(columns, rows))
    else:
        blocks.append(Paragraph(_("No doctor findings."), "ok"))
    blocks += _straggler_blocks(r)
    if r.not_compared:
        blocks += [Heading(_("Not compared"), 2), Bullets(list(r.not_compared))]
    return Document(title=_("gpuwise fleet report"), blocks=blocks, data=data)


def _mixed_rows(r: FleetReport) -> list[tuple[str, object]]:
    """ "mixed fleet: N groups" and each group's size, when the nodes are not all of one GPU model and SKU."""
    if len(r.groups) < 2:
        return []
    sizes = "; ".join(
        _("{group}: {count}").format(group=g.name, count=len(g.nodes))
        + ("" if g.judged else " " + _("(one node: not compared)"))
        for g in r.groups
    )
    return [
        (
            _("groups"),
            Styled(
                _("mixed fleet: {count} groups ({sizes}); nodes are compared within their group").format(
                    count=len(r.groups), sizes=sizes
                ),
                "warn",
            ),
        )
    ]


def _mixed(r: FleetReport) -> bool:
    return len(r.groups) > 1


def _spread_blocks(r: FleetReport) -> list[Block]:
    """Each metric's spread over the nodes (every value is in the JSON's distributions), and its chart."""
    if not r.distributions:
        return []
    flagged: dict[tuple[str, str | None], int] = {}
    for o in r.outliers:
        flagged[(o.metric, o.node_group)] = flagged.get((o.metric, o.node_group), 0) + 1
    rows = []
    for d in r.distributions:
        values = [v.value for v in d.values]
        n = flagged.get((d.metric, d.node_group), 0)
        rows.append([*([d.node_group or C_("scope", "links")] if _mixed(r) else []), d.metric, d.unit, str(len(values)), _num(min(values)), _num(d.median), _num(max(values)),
                     Styled(str(n), "fail") if n else "0"])  # fmt: skip
    columns = [Column(_("metric")), Column(_("unit")), Column(_("values"), "right"), Column(_("min"), "right"),
               Column(_("median"), "right"), Column(_("max"), "right"), Column(_("outliers"), "right")]  # fmt: skip
    if _mixed(r):
        columns.insert(0, Column(_("node group")))
    return [
        Heading(_("Spread per metric"), 2),
        Table(
            columns,
            rows,
            caption=_("values: one per node (per GPU for GPU metrics, per direction for links)"),
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
        (_("all-reduce busbw"), _num(c.busbw_gb_s, "GB/s")),
        (_("ranks / nodes"), f"{c.world_size or '—'} / {c.nodes or '—'} ({c.backend or '?'})"),
        (_("per-rank time (largest size)"), ", ".join(f"{t:.0f} us" for t in c.per_rank_time_us) or "—"),
    ]
    out: list = [Heading(_("Inter-node collective"), 2), KeyValues(rows)]
    if c.links:
        columns = [Column(C_("link", "from")), Column(C_("link", "to")), Column(_("median GB/s"), "right"),
                   Column(_("best GB/s"), "right")]  # fmt: skip
        out.append(
            Table(
                columns,
                [[p["src"], p["dst"], f"{p['gb_s']:.3f}", f"{p['best_gb_s']:.3f}"] for p in c.links],
                title=_("pairwise link test"),
            )
        )
    if c.problems:
        out.append(Bullets([Styled(p, "warn") for p in c.problems]))
    return out


def _straggler_blocks(r: FleetReport) -> list:
    s = r.straggler
    out: list = [Heading(_("Straggler verdict for the next job"), 2)]
    if not s.exclude:
        out.append(Paragraph(_("Keep every node."), "ok"))
    else:
        out.append(
            Table(
                [Column(_("exclude")), Column(_("why"))],
                [[n, "; ".join(s.reasons[n])] for n in s.exclude],
            )
        )
        out.append(Code([s.sbatch_line or ""], "bash"))
    if s.kept_groups:
        out.append(
            Paragraph(
                _(
                    "Not excluded: every node of {groups} differs, so no node stands out in its group "
                    "(look at the group's setup, not at one node)."
                ).format(groups=", ".join(s.kept_groups)),
                "warn",
            )
        )
    if s.step_ms_all is not None:
        out.append(
            KeyValues(
                [
                    (
                        _("step time, all nodes"),
                        _("{step} ({units} median-node units)").format(
                            step=f"{s.step_ms_all:.4g} ms", units=f"{s.throughput_all:g}"
                        ),
                    ),
                    (
                        _("step time, without excluded"),
                        _("{step} ({units} median-node units)").format(
                            step=_num(s.step_ms_without, "ms"), units=_num(s.throughput_without)
                        ),
                    ),
                    (C_("measurement", "from"), s.step_metric or "—"),
                ],
            )
        )
        out.append(Paragraph(_("Estimate: {method}.").format(method=s.method), "dim"))
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


@shows
def health_view(h: HealthResult) -> Document:
    data = health_data(h)  # from the model as it is: JSON stays English under every --lang
    h = worded(h)
    crit = h.critical
    verdict = (
        Styled(_("CRITICAL: {count} finding(s)").format(count=len(crit)), "fail")
        if crit
        else Styled(_("healthy"), "ok")
    )
    rows = [(_("node"), h.node), (_("verdict"), verdict), (_("took"), f"{h.seconds:.2f} s")]
    if h.drained:
        rows.append((_("drained"), Styled(_("yes (scontrol update state=drain)"), "warn")))
    if h.drain_error:
        rows.append((_("drain failed"), Styled(h.drain_error, "fail")))
    blocks: list = [KeyValues(rows)]
    shown = [f for f in h.findings if f.status == "fail" or f.id.startswith("expect.")]
    if shown:
        blocks.append(
            Table(
                [Column(_("status")), Column("id"), Column(_("finding"))],
                [
                    [Styled(_status(f.status), "fail" if f.status == "fail" else "ok"), f.id, f.title]
                    for f in shown
                ],
            )
        )
    return Document(title=_("gpuwise fleet healthcheck"), blocks=blocks, data=data)
