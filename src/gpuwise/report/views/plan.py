"""`gpuwise plan`: options × node counts, the chosen setup per option, the recommendation, then notes."""

from __future__ import annotations

from gpuwise import units
from gpuwise.i18n import C_, _, shows, worded
from gpuwise.plan.decision import CAVEAT_KINDS, Pick, ReasonKind, pricing_label
from gpuwise.plan.export import assumptions, plan_to_json
from gpuwise.plan.planner import Plan
from gpuwise.report.document import (
    Block,
    Bullets,
    Cell,
    Column,
    Document,
    Heading,
    Paragraph,
    Styled,
    Table,
)
from gpuwise.report.views.charts import plan_cost_chart
from gpuwise.report.views.plan_charts import (
    plan_break_even_chart,
    plan_time_chart,
    sensitivity_table,
    tornado_chart,
)

VERDICT_STYLE = {"cloud": "info", "build": "ok", "hybrid": "warn", "undecided": "fail"}


def _verdict_word(verdict: str) -> str:
    """The verdict in capitals, worded as the serving plan words it (msgctxt "verdict")."""
    words = {
        "cloud": C_("verdict", "CLOUD"),
        "build": C_("verdict", "BUILD"),
        "hybrid": C_("verdict", "HYBRID"),
        "undecided": C_("verdict", "UNDECIDED"),
    }
    return words.get(verdict, verdict.upper())


def _ccy(plan: Plan, o: int) -> str:
    return plan.currency if plan.convertible[o] else plan.rows[o].currency


def _one_currency(plan: Plan) -> str:
    """The currency every shown option is priced in ("" when they differ: then each cell names its own)."""
    currencies = {_ccy(plan, o) for o in plan.shown}
    return currencies.pop() if len(currencies) == 1 else ""


def _money(plan: Plan, o: int, value: float, one_ccy: str) -> str:
    return units.money(value, "" if one_ccy else _ccy(plan, o), compact=True)


def _label(plan: Plan, o: int, gpus: bool = False) -> str:
    row = plan.rows[o]
    parts = [row.label, pricing_label(row.pricing), row.region or ""]
    if gpus:
        parts.insert(1, f"({row.numbers.gpus_per_node}× {row.gpu_name})")
    return " ".join(p for p in parts if p)


def _title_ccy(one_ccy: str) -> str:
    return _(" in {currency}").format(currency=one_ccy) if one_ccy else ""


def sweep_table(plan: Plan, one_ccy: str) -> Table:
    """One row per option; each node-count cell: scaling efficiency, time to train, cost per run."""
    cols = [Column(_("option"))] + [
        Column(_("1 node") if n == 1 else _("{n} nodes").format(n=int(n)), "right") for n in plan.nodes
    ]
    deadline = plan.workload.deadline_days
    rows = []
    for o in plan.shown:
        cells: list[Cell] = [_label(plan, o, gpus=True)]
        for k in range(len(plan.nodes)):
            reasons = plan.short_reasons(o, k)
            if reasons:
                cells.append(Styled("✗ " + "\n✗ ".join(reasons), "dim"))
                continue
            secs = plan.perf.time_to_train_s[o, k]
            late = deadline is not None and secs / 86400 > deadline
            mark = "▶ " if plan.chosen[o] == k else ""
            bounds = plan.efficiency_bounds(o, k)
            spread = f" ({bounds[0] * 100:.0f}–{bounds[1] * 100:.0f}%)" if bounds else ""
            text = (
                f"{mark}{units.percent(plan.perf.efficiency[o, k])}{spread}\n{units.duration(secs)}"
                f"\n{_money(plan, o, plan.run_cost[o, k], one_ccy)}"
            )
            cells.append(Styled(text, "fail") if late else text)
        rows.append(cells)
    return Table(
        cols,
        rows,
        title=_("Options × node counts: scaling efficiency vs 1 node, time to train, cost per run")
        + _title_ccy(one_ccy),
        caption=_(
            "▶ = chosen node count (cheapest that meets the deadline); red = misses the deadline; "
            "✗ = cannot run (see the JSON's 'reasons'); (a–b%) = efficiency over the sourced range of "
            "achieved network bandwidth for NCCL over TCP or RDMA"
        ),
    )


def _break_even(plan: Plan, key: str) -> tuple[str, str]:
    be = plan.decision.per_option.get(key)
    if be is None:
        return "", ""
    u, m = be.utilisation, be.months
    u_txt = units.UNKNOWN if u != u else (units.percent(u) if u <= 1 else ">100%")
    return u_txt, units.number(m, 0, _("mo")) if m != float("inf") else _("never")


def chosen_tables(plan: Plan, one_ccy: str) -> tuple[Table, Table]:
    """The chosen node count per option, in two narrow tables: where the step time goes, and the cost."""
    step_heads = (_("step"), _("compute"), _("comm"), _("exposed"), _("stragg."), _("data"), _("mem/GPU"))
    cost_heads = (
        _("nodes"),
        _("time"),
        _("per run"),
        _("per year"),
        _("GPU-h"),
        "U*",
        _("months"),
        _("lead"),
    )
    step_cols = [Column(_("option"))] + [Column(h, "right") for h in step_heads]
    cost_cols = [Column(_("option"))] + [Column(h, "right") for h in cost_heads]
    steps, costs = [], []
    p = plan.perf
    for o in plan.shown:
        k = int(plan.chosen[o])
        row = plan.rows[o]
        name = _label(plan, o)
        lead = units.number(row.lead_time_days, 0, "d")
        if k < 0:  # the reason is in the sweep table and the JSON
            steps.append([name, Styled(C_("node count", "none"), "fail"), *[""] * 6])
            costs.append([name, Styled(C_("node count", "none"), "fail"), *[""] * 6, lead])
            continue
        s = units.seconds
        steps.append(
            [
                name,
                s(p.step_s[o, k]),
                s(p.compute_s[o, k]),
                s(p.comm_s[o, k]),
                s(p.exposed_comm_s[o, k]),
                s(p.straggler_s[o, k]),
                s(p.data_s[o, k]),
                units.gib(p.memory_per_gpu_bytes[o, k]),
            ]
        )
        costs.append(
            [
                name,
                str(int(plan.nodes[k])),
                units.duration(p.time_to_train_s[o, k]),
                _money(plan, o, plan.run_cost[o, k], one_ccy),
                _money(plan, o, plan.year_cost[o, k], one_ccy),
                _money(plan, o, plan.eff_gpu_hour_cost[o, k], one_ccy),
                *_break_even(plan, row.key),
                lead,
            ]
        )
    return (
        Table(
            step_cols,
            steps,
            title=_("Chosen setup per option: where a step's time goes"),
            caption=_("exposed = communication not hidden behind backward; stragg. = straggler wait"),
        ),
        Table(
            cost_cols,
            costs,
            title=_("Chosen setup per option: time and cost") + _title_ccy(one_ccy),
            caption=_(
                "per year = fleet busy at the org's utilisation; GPU-h = per effective GPU-hour; "
                "U* and months = break-even utilisation and time vs the best build; lead = lead time"
            ),
        ),
    )


def _pick_line(p: Pick) -> str:
    """'rent 4 × aws p5.48xlarge (...), on-demand, us-east-1: 90,588 USD per run' (+ the on-prem range)."""
    cost = units.money(p.cost_per_run, p.currency, compact=True)
    if p.cost_per_run_low != p.cost_per_run_high:
        low = units.money(p.cost_per_run_low, p.currency, compact=True)
        cost += f" ({low}–{units.money(p.cost_per_run_high, p.currency, compact=True)})"
    days = round(p.billed_hours / 24)
    if p.billed_hours <= p.run_hours * 1.001:
        line = _("{pick}: {cost} per run").format(pick=p.text(), cost=cost)
    elif days == 1:
        line = _("{pick}: {cost} per run, billed 1 whole day").format(pick=p.text(), cost=cost)
    else:
        line = _("{pick}: {cost} per run, billed {days} whole days").format(
            pick=p.text(), cost=cost, days=days
        )
    if p.side == "build":
        return line
    if p.price_as_of:
        return line + " " + _("(price as of {date})").format(date=p.price_as_of)
    return line + " " + _("(the price's source gives no date)")


def duration_text(hours: float | None) -> str:
    """Seconds, minutes, hours or days, whichever reads best (units are never translated)."""
    if hours is None:
        return _("unknown")
    if hours * 60 < 1:
        return f"{hours * 3600:.0f} s"
    if hours >= 48:
        return f"{hours / 24:.1f} d"
    return f"{hours * 60:.1f} min" if hours < 1 else f"{hours:.1f} h"


def data_path_label(path: str) -> str:
    """The data path (an enum in the JSON: catalog/data_paths.py PathKind) as the report shows it."""
    return {
        "same-region": C_("data path", "same-region object store"),
        "internet": C_("data path", "internet (another region or cloud)"),
        "dedicated-line": C_("data path", "dedicated line"),
        "upload": C_("data path", "upload over your link"),
        "shipping": C_("data path", "shipping disks"),
    }.get(path, path)


def _staging(plan: Plan) -> list[Block]:
    """Bringing the data set to each shown option before training: its own line, time and cost."""
    shown = [(o, s) for o in plan.shown if o < len(plan.staging) and (s := plan.staging[o]) is not None]
    if not shown:
        return []
    rows, why = [], {}
    for o, s in shown:
        time = duration_text(s.hours)
        rate = _("unknown") if s.gbps is None else f"{s.gbps:g} Gbit/s"
        cost = _("unknown") if s.cost is None else f"{s.cost:,.2f} {s.currency}"
        rows.append([_label(plan, o), data_path_label(s.path), rate, time, cost])
        why.setdefault(s.path, _("{path}: {bound}; cost: {cost}").format(
            path=data_path_label(s.path), bound=s.bound, cost=s.cost_source))  # fmt: skip
        if s.comparison:
            why.setdefault(s.path + "/compare", s.comparison)
    cols = [Column(_("option")), Column(_("path")), Column(_("rate")), Column(_("time")), Column(_("cost"))]
    return [
        Heading(_("Data staging (before training)"), level=2),
        Table(cols, rows),
        Paragraph(
            _("The staging time is added to each option's time to result; its cost is not in the run cost.")
        ),
        Bullets(list(why.values())),
    ]


def _decision(plan: Plan) -> list[Block]:
    d = plan.decision
    blocks: list[Block] = [
        Heading(_("Recommendation: {verdict}").format(verdict=_verdict_word(d.verdict)), level=2),
        Paragraph(d.summary, VERDICT_STYLE.get(d.verdict, "bold")),
    ]
    picks = [p for p in ((d.rent, d.buy) if d.verdict != "build" else (d.buy, d.rent)) if p is not None]
    if picks:
        blocks.append(Bullets([_pick_line(p) for p in picks]))
    if d.reasons:
        missing = {ReasonKind.NO_CLOUD_OPTION, ReasonKind.NO_BUILD_OPTION} | CAVEAT_KINDS  # not votes
        marks = [
            ("!" if r.kind in missing else "+build" if r.favours == "build" else "+cloud", r.text)
            for r in d.reasons
        ]
        style = {"!": "warn", "+build": "ok", "+cloud": "info"}
        shown = {"!": "!", "+build": _("+build"), "+cloud": _("+cloud")}  # the side a reason favours
        blocks.append(Bullets([Styled(f"{shown[m]}  {text}", style[m]) for m, text in marks]))
    if d.flips:
        blocks += [Heading(_("What would flip it"), level=3), Bullets([f.text for f in d.flips])]
    blocks += [*sensitivity_table(plan), *tornado_chart(plan), *plan_break_even_chart(plan)]
    return blocks


def _exclusions(plan: Plan) -> list[Block]:
    """One row per option left out for the org's jurisdiction, then each rule once with its source."""
    rows = [[e.name, e.rule, e.detail] for e in plan.excluded]
    title = _("Options the organisation cannot use (jurisdiction {jurisdiction})").format(
        jurisdiction=plan.workload.org.jurisdiction
    )
    rules = {e.rule: e for e in plan.excluded}
    why = [
        _("{rule}: {reason}. Source: {source}").format(rule=r, reason=_(e.reason), source=e.source)
        if e.source
        else f"{r}: {_(e.reason)}"
        for r, e in rules.items()
    ]
    cols = [Column(_("left out")), Column(_("rule")), Column(_("because"))]
    return [Table(cols, rows, title=title), Bullets(why)]


def _notes(plan: Plan, verbose: bool) -> list[Block]:
    blocks: list[Block] = [Heading(_("Notes"), level=2)]
    cal = plan.calibration
    if cal is not None:
        gpu = cal.gpu_name or _("unknown GPU")
        blocks.append(Paragraph(_("Calibration from {gpu}:").format(gpu=gpu), "bold"))
        used = [Styled(f"✓ {u}", "ok") for u in cal.used] or [_("(nothing usable)")]
        blocks.append(Bullets(used + [Styled(i, "dim") for i in cal.ignored[:8]]))
    blocks += [Paragraph(_("note: {note}").format(note=n), "warn") for n in plan.notes]
    if plan.excluded:
        blocks += _exclusions(plan)
    if verbose:
        rows = [
            [str(a["key"]), units.value(a["value"]), Styled(str(a["source"]), "dim")]
            for a in assumptions(plan)
        ]
        blocks.append(
            Table(
                [Column(_("assumption")), Column(_("value"), "right"), Column(_("source"))],
                rows,
                title=_("Assumptions (override in the options file under model_overrides)"),
            )
        )
    else:
        blocks.append(
            Paragraph(_('Model assumptions and their sources: --json ("assumptions") or --verbose.'), "dim")
        )
    return blocks


@shows
def plan_view(plan: Plan, verbose: bool = False) -> Document:
    """The plan: workload line, sweep table, chosen setups, recommendation, then notes."""
    data = plan_to_json(plan)  # from the model as it is: JSON stays English under every --lang
    plan = worded(plan)
    wl = plan.workload
    one_ccy = _one_currency(plan)
    title = f"gpuwise plan — {wl.name or plan.workload_path}"
    head = _("{params}B params, {flops} FLOPs, {steps} steps of {batch} samples, {precision}").format(
        params=f"{wl.model.param_count() / 1e9:.3g}",
        flops=f"{wl.total_train_flops():.3g}",
        steps=units.number(wl.steps(), 0),
        batch=wl.training.global_batch,
        precision=wl.training.precision,
    )
    if wl.deadline_days:
        head += _(", deadline {days} days").format(days=f"{wl.deadline_days:g}")
    head += _("; {n} options evaluated, {shown} shown").format(n=len(plan.rows), shown=len(plan.shown))
    blocks: list[Block] = [
        Heading(title),
        Paragraph(head),
        sweep_table(plan, one_ccy),
        *plan_time_chart(plan),
        *plan_cost_chart(plan),
    ]
    blocks += [*chosen_tables(plan, one_ccy), *_staging(plan), *_decision(plan), *_notes(plan, verbose)]
    return Document(title=title, blocks=blocks, data=data)
