"""`gpuwise plan` for an inference workload: capacity per node type, options with cost ranges, the
hourly capacity-versus-traffic table, the recommendation with what would flip it, and the check of the
capacity model against published benchmarks."""

from __future__ import annotations

from gpuwise import units
from gpuwise.i18n import C_, _, shows, worded
from gpuwise.plan.serving.decide import verdict_name
from gpuwise.plan.serving.defaults import OVERRIDDEN
from gpuwise.plan.serving.export import break_even_utilisation, per_million, serving_plan_to_json
from gpuwise.plan.serving.planner import ServingPlan
from gpuwise.report.document import Block, Bullets, Column, Document, Heading, Paragraph, Styled, Table
from gpuwise.report.views.charts import serving_capacity_chart
from gpuwise.report.views.plan import VERDICT_STYLE

HOURLY_OPTIONS = 3  # options shown as columns of the hourly table


def _rng(values, ccy: str = "") -> str:
    lo, typ, hi = (units.money(v, ccy, compact=True) for v in values)
    return f"{typ}\n{lo}–{hi}" if lo != hi else typ


def _pct(x: float | None) -> str:
    return units.UNKNOWN if x is None else (units.percent(x, 1) if x <= 1 else ">100%")


def capacity_table(plan: ServingPlan) -> Table:
    rows = []
    for h in plan.hardware:
        c = h.capacity
        if not c.feasible:
            rows.append([h.label, Styled(f"✗ {c.reason}", "dim"), "", "", "", ""])
            continue
        layout = f"tp {c.tp} × {c.replicas_per_node}" + (
            "\n" + _("mean batch {n}").format(n=c.batch) if c.batch else ""
        )
        latency = (
            f"{_ms(c.ttft_p95_s, 0)} / {_ms(c.ttft_p99_s, 0)}\n{_ms(c.tpot_p95_s, 1)} / {_ms(c.tpot_p99_s, 1)}"
            if plan.workload.is_llm
            else C_("latency", "given")
        )
        if c.precision and plan.workload.is_llm and c.precision != plan.workload.model.precision:
            layout += "\n" + c.precision
        rows.append(
            [
                h.label,
                layout,
                latency,
                units.number(c.rps_per_node, 1),
                units.number(c.planned_rps_per_node, 1),
                _(c.limit) if c.limit else "",
            ]
        )
    return Table(
        [
            Column(_("node type")),
            Column(_("layout")),
            Column("TTFT p95 / p99\nTPOT p95 / p99" if plan.workload.is_llm else "p95", "right"),
            Column("req/s", "right"),
            Column(_("planned"), "right"),
            Column(_("limited by")),
        ],  # fmt: skip
        rows,
        title=_("Capacity per node (model at the service target)"),
        caption=(
            _(
                "req/s = the highest load whose predicted TTFT and TPOT percentiles meet the target, with "
                "{arrivals} arrivals and continuous batching (latencies shown at that load); options divide "
                "it further by the model's measured error (see Notes); ✗ = cannot serve it"
            ).format(arrivals=_arrivals(plan))
            if plan.workload.is_llm
            else _(
                "planned = given throughput × max_load_fraction (headroom for the p95); ✗ = cannot serve it"
            )
        ),
    )


def _ms(seconds: float, digits: int) -> str:
    return units.number(seconds * 1e3, digits, "ms")


def _arrivals(plan: ServingPlan) -> str:
    burst = plan.workload.traffic.burst_factor
    return _("Poisson") if burst == 1 else _("bursty (burst factor {b})").format(b=f"{burst:g}")


def options_table(plan: ServingPlan) -> Table:
    ccy = plan.currency
    rows = []
    for s in plan.shown():
        per_req, per_tok = per_million(plan, s)
        nodes = f"{s.base_nodes}–{s.peak_nodes}" if s.base_nodes != s.peak_nodes else str(s.peak_nodes)
        slo = units.percent(s.slo_attainment, 1)
        rows.append(
            [
                f"{s.title}\n{s.hardware.label}",
                nodes,
                _rng(s.cost_month),
                _rng(per_tok if per_tok else per_req),
                Styled(slo, "fail") if s.slo_attainment + 1e-9 < plan.slo_target else slo,
                units.percent(s.utilisation),
                _pct(break_even_utilisation(plan, s)),
            ]
        )
    unit = _("per M tokens") if plan.workload.is_llm else _("per M req.")
    return Table(
        [
            Column(_("option")),
            Column(_("nodes"), "right"),
            Column(_("per month"), "right"),
            Column(unit, "right"),
            Column("SLO", "right"),
            Column(_("util."), "right"),
            Column("U*", "right"),
        ],  # fmt: skip
        rows,
        title=_("Options, cheapest first (in {currency}; typical, then low–high)").format(currency=ccy),
        caption=_(
            "typical, low–high: capacity corrected by the model's median, smallest and largest error "
            "against published throughput benchmarks (see Notes); "
            "SLO = share of hours capacity meets the target (red: below target); util. = demand / capacity "
            "paid for; U* = break-even utilisation vs renting the cheapest on-demand node"
        ),
    )


def hourly_table(plan: ServingPlan) -> Table:
    shown = plan.shown()[:HOURLY_OPTIONS]
    demand = plan.demand.daily_profile() * plan.demand.first_year_mean_growth()
    caps = [s.capacity_rps.reshape(7, 24).mean(axis=0) for s in shown]
    rows = []
    for h in range(24):
        cells = [f"{h:02d}:00", units.number(float(demand[h]), 1)]
        for cap in caps:
            text = units.number(float(cap[h]), 0)
            cells.append(Styled(text, "fail") if cap[h] + 1e-9 < demand[h] else text)
        rows.append(cells)
    cols = [Column(_("hour")), Column(_("demand"), "right")] + [
        Column(f"{i + 1}. {s.title}", "right") for i, s in enumerate(shown)
    ]
    return Table(
        cols,
        rows,
        title=_("Capacity vs traffic by hour (requests/s, mean over the week, first-year growth)"),
        caption=_(
            "columns 1.. = the first options above; red = capacity below demand "
            "(scale-up delay not shown here: it is in SLO)"
        ),
    )


def _decision(plan: ServingPlan) -> list[Block]:
    d = plan.decision
    blocks: list[Block] = [
        Heading(_("Recommendation: {verdict}").format(verdict=verdict_name(d.verdict)), level=2),
        Paragraph(d.summary, VERDICT_STYLE.get(d.verdict, "bold")),
    ]
    if d.reasons:
        sides = {"build": (_("+build"), "ok"), "cloud": (_("+cloud"), "info")}
        blocks.append(
            Bullets([Styled(f"{sides[r.favours][0]}  {r.text}", sides[r.favours][1]) for r in d.reasons])
        )
    if d.flips:
        blocks += [Heading(_("What would flip it"), level=3), Bullets([f.text for f in d.flips])]
    return blocks


WITHIN = 0.25  # the tolerance docs/serving-model.md judges the validation table at


def benchmark_table(plan: ServingPlan, verbose: bool = False) -> Table:
    """Every published point with --verbose; otherwise only those outside 25%, under a count."""
    fmt = {
        "ttft_ms": ("TTFT", "ms"),
        "itl_ms": ("ITL", "ms"),
        "output_tokens_s": (_("output"), "tok/s"),
        "server_tokens_s": (_("server p99"), "tok/s"),
    }
    rows = []
    shown = plan.checks if verbose else [c for c in plan.checks if abs(c.error) > WITHIN]
    for c in shown:
        what, unit = fmt.get(c.metric, (c.metric, ""))
        rows.append(
            [
                _("{id} (held out)").format(id=c.id) if c.held_out else c.id,
                what,
                units.number(c.published, 1, unit),
                units.number(c.predicted, 1, unit),
                f"{c.error:+.0%}",
            ]  # fmt: skip
        )
    return Table(
        [
            Column(_("published benchmark")),
            Column(_("metric")),
            Column(_("published"), "right"),
            Column(C_("capacity model", "model"), "right"),
            Column(_("error"), "right"),
        ],  # fmt: skip
        rows,
        title=(
            _("Capacity model vs published serving benchmarks (sources: --json 'capacity_model_check')")
            if verbose
            else _(
                "Capacity model vs published serving benchmarks: {within} of {total} within 25%; the rows "
                "outside are shown (all rows and sources: --verbose or --json 'capacity_model_check')"
            ).format(within=len(plan.checks) - len(shown), total=len(plan.checks))
        ),
        caption=_(
            "error = (model − published) / published: + on throughput and − on latency mean optimistic. "
            "Options use capacity × {factors} (typical, low cost, high cost) = 1 / (1 + median, smallest, "
            "largest throughput error)"
        ).format(
            factors=", ".join(
                f"{f:.2f}"
                for f in (plan.capacity_factors[1], plan.capacity_factors[0], plan.capacity_factors[2])
            )
        ),
    )


def _targets(service) -> str:
    parts = []
    for p in (95, 99):
        ttft, tpot = getattr(service, f"ttft_p{p}_ms"), getattr(service, f"tpot_p{p}_ms")
        if ttft:
            parts.append(_("p{p} TTFT {ms} ms").format(p=p, ms=f"{ttft:g}"))
        if tpot:
            parts.append(_("p{p} TPOT {ms} ms").format(p=p, ms=f"{tpot:g}"))
    return " / ".join(parts)


@shows
def serving_view(plan: ServingPlan, verbose: bool = False) -> Document:
    data = serving_plan_to_json(plan)  # from the model as it is: JSON stays English under every --lang
    plan = worded(plan)
    wl, dem = plan.workload, plan.demand
    title = _("gpuwise plan (inference) — {name}").format(name=wl.name or plan.workload_path)
    m = wl.model
    model = (
        _("{params}B params {precision}, {prompt} prompt + {output} output tokens, target {targets}").format(
            params=f"{m.params / 1e9:.3g}",
            precision=m.precision,
            prompt=m.prompt_tokens,
            output=m.output_tokens,
            targets=_targets(wl.service),
        )
        if wl.is_llm
        else _("{name}: {rps} req/s per GPU, p95 {ms} ms").format(
            name=m.name or C_("served", "model"),
            rps=m.throughput_per_gpu or _("calibrated"),
            ms=f"{wl.service.latency_p95_ms:g}",
        )
    )
    traffic = _(
        "traffic ({source}): peak {peak}, valley {valley}, mean {mean} req/s (peak/valley {ratio}×), "
        "growth {growth}/year; scale-up delay {delay} min; SLO target {slo} of hours"
    ).format(
        source=dem.source,
        peak=units.number(dem.peak, 1),
        valley=units.number(dem.valley, 1),
        mean=units.number(dem.mean, 1),
        ratio=f"{dem.peak_to_valley:.3g}",
        growth=f"{dem.growth_per_year:.0%}",
        delay=f"{plan.delay_min:g}",
        slo=f"{plan.slo_target:.0%}",
    )
    blocks: list[Block] = [
        Heading(title),
        Paragraph(model),
        Paragraph(traffic),
        capacity_table(plan),
        options_table(plan),
        *serving_capacity_chart(plan),
        hourly_table(plan),
        *_decision(plan),
        Heading(_("Notes"), level=2),
        *([benchmark_table(plan, verbose)] if wl.is_llm else []),
    ]
    blocks += [Paragraph(_("note: {note}").format(note=n), "warn") for n in plan.notes]
    if plan.excluded:
        blocks += _exclusions(plan)
    if verbose:
        d = plan.defaults
        rows = [
            [
                f"serving.{k}",
                units.value(d.value(k)),
                Styled(_(OVERRIDDEN) if k in d.overridden else d.source(k), "dim"),
            ]
            for k in d.names()
        ]  # the packaged sources cite English documents: quoted as written
        blocks.append(
            Table(
                [Column(_("assumption")), Column(_("value"), "right"), Column(_("source"))],
                rows,
                title=_("Assumptions (override in the options file under model_overrides)"),
            )  # fmt: skip
        )
    else:
        blocks.append(
            Paragraph(_('Model assumptions and their sources: --json ("assumptions") or --verbose.'), "dim")
        )
    return Document(title=title, blocks=blocks, data=data)


def _exclusions(plan: ServingPlan) -> list[Block]:
    """Offers the serving plan left out by policy (a community marketplace), each rule once with its reason."""
    rows = [[e.name, e.rule, e.detail] for e in plan.excluded]
    cols = [Column(_("left out")), Column(_("rule")), Column(_("because"))]
    rules = {e.rule: e for e in plan.excluded}
    why = [f"{rule}: {_(e.reason)}" for rule, e in rules.items()]
    return [Table(cols, rows, title=_("Offers left out of production serving")), Bullets(why)]
