"""`gpuwise stability`: verdict per layer, the statistics of every metric, the slow windows with the
context signal that moved with each, and (html) a time series per metric with its windows shaded and
the context signals below. Every number a chart draws is in a table too, or in the JSON."""

from __future__ import annotations

from gpuwise import units
from gpuwise.documents.ids import STABILITY_RANK_SCHEMA
from gpuwise.i18n import N_, _, shows, worded
from gpuwise.report.document import (
    Block,
    Chart,
    Column,
    Document,
    KeyValues,
    Paragraph,
    Series,
    Styled,
    Table,
)
from gpuwise.stability.model import StabilityReport

VERDICT_STYLE = {"stable": "ok", "variable": "warn", "unstable": "fail", "unknown": "dim"}
VERDICT_WORD = {
    "stable": N_("stable"),
    "variable": N_("variable"),
    "unstable": N_("unstable"),
    "unknown": N_("unknown"),
}
ALWAYS_SHOWN = ("steal_pct", "runq_wait_ms_per_s", "throttled_ms_per_s", "gpu_sm_mhz")
MAX_CONTEXT_CHARTS = 5


def _num(x: float | None) -> str:
    return units.number(x) if x is not None else "-"


def _pct(x: float | None) -> str:
    return f"{x:.1%}" if x is not None else "-"


def verdict_cell(verdict: str) -> Styled:
    return Styled(_(VERDICT_WORD.get(verdict, verdict)), VERDICT_STYLE.get(verdict))


def _summary_table(r: StabilityReport) -> Table:
    rows = []
    for res in r.results:
        s = res.summary
        ci = f" ({s.cv_ci[0]:.1%}–{s.cv_ci[1]:.1%})" if s.cv_ci else ""
        rows.append(
            [
                res.info.name,
                res.info.unit,
                str(s.n),
                _num(s.median),
                _num(s.p5),
                _num(s.p95),
                _num(s.p99),
                _pct(s.cv) + ci,
                _pct(s.robust_cv),
                str(len(res.windows)),
                verdict_cell(res.verdict),
            ]
        )
    cols = [
        Column(_("metric")),
        Column(_("unit")),
        Column("n", "right"),
        Column(_("median"), "right"),
        Column("p5", "right"),
        Column("p95", "right"),
        Column("p99", "right"),
        Column(_("cv (95% CI)"), "right"),
        Column(_("robust cv"), "right"),
        Column(_("windows"), "right"),
        Column(_("verdict")),
    ]
    return Table(
        cols,
        rows,
        title=_("Every metric"),
        caption=_(
            "cv = std/mean with its bootstrap 95 percent interval; robust cv = 1.4826·MAD/median (the verdict uses it, "
            "with the slow windows)"
        ),
    )


def _windows_table(r: StabilityReport) -> Table | None:
    rows = []
    for res in r.results:
        for w in res.windows:
            moved = "; ".join(
                _("{signal} {outside} → {inside}").format(
                    signal=c.signal, outside=_num(c.outside), inside=_num(c.inside)
                )
                for c in w.context[:3]
            ) or _("no context signal moved")
            rows.append(
                [
                    res.info.name,
                    f"{w.start_s:.0f}–{w.end_s:.0f} s",
                    _num(w.median),
                    _num(w.baseline),
                    f"{w.change:.0%}",
                    moved,
                ]
            )
    if not rows:
        return None
    cols = [
        Column(_("metric")),
        Column(_("window")),
        Column(_("median"), "right"),
        Column(_("baseline"), "right"),
        Column(_("worse by"), "right"),
        Column(_("moved with it (outside → inside)")),
    ]
    return Table(cols, rows, title=_("Slow windows (PELT change points)"))


def _metric_charts(r: StabilityReport) -> list[Chart]:
    charts = []
    for res in r.results:
        t, v = r.series(res.info.name)
        if len(t) < 2:
            continue
        bands = [
            (
                w.start_s,
                w.end_s,
                _("slow: {pct} worse, {cause}").format(pct=f"{w.change:.0%}", cause=w.cause or "-"),
            )
            for w in res.windows
        ]
        charts.append(
            Chart(
                "line",
                f"{res.info.name} ({_(VERDICT_WORD[res.verdict])})",
                _("seconds since start"),
                res.info.unit,
                [Series(res.info.name, t, v)],
                x_bands=bands,
                rules=[(res.summary.median, _("median"))] if res.summary.median is not None else [],
            )
        )
    return charts


def _context_charts(r: StabilityReport) -> list[Chart]:
    named = [c.signal for res in r.results for w in res.windows for c in w.context]
    wanted = list(dict.fromkeys([*named, *ALWAYS_SHOWN]))
    spans: dict[tuple[float, float], list[str]] = {}  # one shaded band per window, naming every metric in it
    for res in r.results:
        for w in res.windows:
            spans.setdefault((w.start_s, w.end_s), []).append(res.info.name)
    bands = [(a, b, ", ".join(names)) for (a, b), names in spans.items()]
    charts = []
    for signal in wanted:
        pts = [(s.t, s.context.get(signal)) for s in r.samples if s.context.get(signal) is not None]
        if len(pts) < 2 or (signal not in named and max(p[1] for p in pts) == min(p[1] for p in pts)):
            continue
        charts.append(
            Chart(
                "line",
                _("context: {signal}").format(signal=r.signals.get(signal, signal)),
                _("seconds since start"),
                signal,
                [Series(signal, [p[0] for p in pts], [p[1] for p in pts])],
                x_bands=bands,
            )
        )
    return charts[:MAX_CONTEXT_CHARTS]


@shows
def stability_view(r: StabilityReport) -> Document:
    data = r.to_json()  # from the model as it is: JSON stays English under every --lang
    r = worded(r)
    blocks: list[Block] = [
        KeyValues(
            [
                (_("host"), r.host),
                (_("started"), r.started),
                (
                    _("probed"),
                    _("{n} rounds every {interval} s over {duration} s").format(
                        n=len(r.samples), interval=f"{r.interval_s:g}", duration=f"{r.duration_s:g}"
                    ),
                ),
                (_("device"), r.device + (f" ({r.gpu_name})" if r.gpu_name else "")),
            ]
            + (
                [
                    (
                        _("probe overhead"),
                        _("{fraction} of the wall time probing; {cpu} CPU-s ({core} of one core)").format(
                            fraction=_pct(r.overhead.probe_fraction),
                            cpu=f"{r.overhead.cpu_s:.1f}",
                            core=_pct(r.overhead.cpu_fraction_of_one_core),
                        ),
                    )
                ]
                if r.overhead
                else []
            ),
            title=_("Stability run"),
        ),
        Table(
            [Column(_("layer")), Column(_("verdict")), Column(_("decided by")), Column(_("why"))],
            [[lv.layer, verdict_cell(lv.verdict), lv.metric, lv.reason] for lv in r.layers],
            title=_("Verdict per layer"),
        ),
        _summary_table(r),
    ]
    windows = _windows_table(r)
    if windows is not None:
        blocks.append(windows)
    else:
        blocks.append(Paragraph(_("No slow window in any metric."), "ok"))
    for w in r.warnings:
        blocks.append(Paragraph(_("warning: {text}").format(text=w), "warn"))
    charts = _metric_charts(r)
    if charts:  # drawn by html only; their numbers are in the tables above and every sample in the JSON
        blocks += charts
        blocks += _context_charts(r)
    return Document(_("gpuwise stability"), blocks, data=data)


@shows
def rank_view(ranks) -> Document:
    """`gpuwise stability --rank DIR`: the nodes, least stable first (stability.rank.NodeRank rows)."""
    metrics = sorted({m for n in ranks for m in n.relative})
    rows = [
        [
            n.node,
            verdict_cell(n.verdict),
            n.worst_layer,
            _pct(n.worst_robust_cv),
            str(n.windows),
            *[f"{n.relative[m]:.0%}" if m in n.relative else "-" for m in metrics],
        ]
        for n in ranks
    ]
    cols = [
        Column(_("node")),
        Column(_("verdict")),
        Column(_("worst layer")),
        Column(_("robust cv"), "right"),
        Column(_("windows"), "right"),
        *[Column(m, "right") for m in metrics],
    ]
    table = Table(
        cols,
        rows,
        title=_("Nodes, least stable first"),
        caption=_("metric columns: the node's median as a share of the fleet's median of that metric"),
    )
    data = {
        "schema": STABILITY_RANK_SCHEMA,
        "nodes": [
            {"node": n.node, "verdict": n.verdict, "worst_layer": n.worst_layer,
             "worst_robust_cv": n.worst_robust_cv, "windows": n.windows, "relative_median": n.relative}
            for n in ranks
        ],
    }  # fmt: skip
    return Document(_("gpuwise stability: nodes ranked"), [table], data=data)
