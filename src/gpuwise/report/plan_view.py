"""Render a rent-vs-build Plan with Rich: options × node counts, chosen setups, then the recommendation."""

from __future__ import annotations

from rich import box
from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from gpuwise.plan.export import assumptions
from gpuwise.plan.planner import Plan

VERDICT_STYLE = {"cloud": "cyan", "build": "green", "hybrid": "yellow", "undecided": "red"}


def money(value: float, ccy: str) -> str:
    """Compact money; `ccy` may be "" when a table states the one currency in its title."""
    if value != value:  # NaN
        return "[dim]n/a[/]"
    if value >= 1e6:
        text = f"{value / 1e6:,.2f}M"
    elif value >= 1e3:
        text = f"{value / 1e3:,.1f}k"
    else:
        text = f"{value:,.2f}"
    return f"{text} {ccy}" if ccy else text


def secs(value: float) -> str:
    """A step-time component with a unit that keeps it short: 13.8 s, 160 ms, 780 us."""
    if value != value:
        return "[dim]n/a[/]"
    if value == 0 or value >= 1:
        return f"{value:.3g} s"
    if value >= 1e-3:
        return f"{value * 1e3:.3g} ms"
    return f"{value * 1e6:.3g} us"


def duration(seconds: float) -> str:
    if seconds != seconds:
        return "[dim]n/a[/]"
    if seconds >= 86400:
        return f"{seconds / 86400:,.1f} d"
    if seconds >= 3600:
        return f"{seconds / 3600:,.1f} h"
    return f"{seconds / 60:,.0f} min"


def _ccy(plan: Plan, o: int) -> str:
    return plan.currency if plan.convertible[o] else plan.rows[o].currency


def sweep_table(plan: Plan) -> Table:
    """One row per option; each node-count cell: scaling efficiency, time-to-train, cost per run."""
    t = Table(
        title="Options × node counts  (scaling efficiency vs 1 node · time to train · cost per run)",
        title_justify="left",
        show_lines=True,
    )
    t.add_column("option", overflow="fold", max_width=34)
    t.add_column("GPU", overflow="fold")
    for n in plan.nodes:
        t.add_column(f"{int(n)} node{'s' if n > 1 else ''}", justify="right")
    deadline = plan.workload.deadline_days
    for o in plan.shown:
        row, cells = plan.rows[o], []
        for k in range(len(plan.nodes)):
            reasons = plan.perf.short_reasons(o, k)
            if reasons:
                cells.append("[dim]✗ " + "\n✗ ".join(map(escape, reasons)) + "[/]")
                continue
            secs = plan.perf.time_to_train_s[o, k]
            late = deadline is not None and secs / 86400 > deadline
            mark = "[bold]▶ [/]" if plan.chosen[o] == k else ""
            time_txt = f"[red]{duration(secs)}[/]" if late else duration(secs)
            cells.append(
                f"{mark}{plan.perf.efficiency[o, k]:.0%}\n{time_txt}\n{money(plan.run_cost[o, k], _ccy(plan, o))}"
            )
        label = f"{escape(row.label)}\n[dim]{escape(row.pricing.replace('_', '-'))}[/]" + (
            f" [dim]{escape(row.region)}[/]" if row.region else ""
        )
        t.add_row(label, f"{escape(str(row.gpu_name))} ×{int(row.numbers['gpus_per_node'])}", *cells)
    t.caption = (
        "▶ = chosen node count (cheapest that meets the deadline); red time = misses the deadline; "
        "✗ = cannot run (see JSON 'reasons')"
    )
    return t


def _table(title: str, columns: tuple[str, ...]) -> Table:
    # light borders, collapsed padding and unwrapped numbers: both tables fit an 80-column terminal
    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    t.add_column(columns[0], overflow="fold", min_width=12)
    for col in columns[1:]:
        t.add_column(col, justify="right", no_wrap=True)
    return t


def chosen_tables(plan: Plan) -> tuple[Table, Table]:
    """The chosen node count per option, in two narrow tables: where the step time goes, and the cost."""
    currencies = {_ccy(plan, o) for o in plan.shown}
    one_ccy = currencies.pop() if len(currencies) == 1 else ""
    steps = _table(
        "Chosen setup per option: "
        "where a step's time goes (exposed = communication not hidden behind backward)",
        ("option", "step", "compute", "comm", "exposed", "stragg.", "data", "mem/GPU"),
    )
    costs = _table(
        "Chosen setup per option: time and cost"
        + (f" in {one_ccy}" if one_ccy else "")
        + " (per year = fleet busy at the org's utilisation; GPU-h = per effective GPU-hour; "
        "break-even vs the best build: utilisation U* and months)",
        ("option", "nodes", "time", "per run", "per year", "GPU-h", "break-even", "lead"),
    )
    p = plan.perf
    for o in plan.shown:
        k = int(plan.chosen[o])
        row = plan.rows[o]
        name = escape(f"{row.label} {row.pricing.replace('_', '-')}")
        lead = f"{row.lead_time_days:.0f} d"
        if k < 0:
            steps.add_row(name, "[red]none[/]", *([""] * 6))  # the reason is in the sweep table and the JSON
            costs.add_row(name, "[red]none[/]", *([""] * 5), lead)
            continue
        c = "" if one_ccy else _ccy(plan, o)
        steps.add_row(
            name,
            secs(p.step_s[o, k]),
            secs(p.compute_s[o, k]),
            secs(p.comm_s[o, k]),
            secs(p.exposed_comm_s[o, k]),
            secs(p.straggler_s[o, k]),
            secs(p.data_s[o, k]),
            f"{p.memory_per_gpu_bytes[o, k] / 2**30:.1f} GiB",
        )
        costs.add_row(
            name,
            str(int(plan.nodes[k])),
            duration(p.time_to_train_s[o, k]),
            money(plan.run_cost[o, k], c),
            money(plan.year_cost[o, k], c),
            money(plan.eff_gpu_hour_cost[o, k], c),
            _break_even(plan, row.key),
            lead,
        )
    return steps, costs


def _break_even(plan: Plan, key: str) -> str:
    be = getattr(plan.decision, "per_option", {}).get(key)
    if not be:
        return ""
    u, m = be["break_even_utilisation"], be["break_even_months"]
    u_txt = "n/a" if u != u else (f"{u:.0%}" if u <= 1 else ">100%")
    m_txt = f"{m:.0f} mo" if m != float("inf") else "never"
    return f"U* {u_txt} · {m_txt}"


def decision_panel(plan: Plan) -> Panel:
    d = plan.decision
    lines = [f"[bold]{escape(d.summary)}[/]", ""]
    for r in d.reasons:
        colour = VERDICT_STYLE["build" if r.favours == "build" else "cloud"]
        lines.append(f"[{colour}]{'+build' if r.favours == 'build' else '+cloud'}[/]  {escape(r.text)}")
    if d.flips:
        lines += ["", "[bold]What would flip it[/]"] + [f"  • {escape(f)}" for f in d.flips]
    style = VERDICT_STYLE.get(d.verdict, "white")
    return Panel(
        "\n".join(lines),
        title=f"Recommendation: [bold {style}]{escape(d.verdict.upper())}[/]",
        title_align="left",
        border_style=style,
    )


def notes_group(plan: Plan, verbose: bool = False) -> Group:
    parts = []
    cal = plan.calibration
    if cal is not None:
        used = "\n".join(f"  ✓ {escape(u)}" for u in cal.used) or "  (nothing usable)"
        ignored = "\n".join(f"  · {escape(i)}" for i in cal.ignored[:8])
        parts.append(
            f"[bold]Calibration[/] from {escape(cal.gpu_name or 'unknown GPU')}:\n{used}"
            + (f"\n{ignored}" if ignored else "")
        )
    for note in plan.notes:
        parts.append(f"[yellow]note:[/] {escape(note)}")
    if verbose:
        parts.append("[bold]Assumptions[/] (override in the options file under model_overrides):")
        parts += [
            f"  {escape(str(a['key']))} = {escape(str(a['value']))}  [dim]{escape(str(a['source']))}[/]"
            for a in assumptions(plan)
        ]
    else:
        parts.append('[dim]Model assumptions and their sources: `--json` ("assumptions") or --verbose.[/]')
    return Group(*parts)


def render_plan(plan: Plan, console: Console | None = None, verbose: bool = False) -> None:
    """Print the plan: sweep table, chosen setups, recommendation, then notes."""
    console = console or Console()
    wl = plan.workload
    head = (
        f"[bold]{escape(str(wl.name or plan.workload_path))}[/]: "
        f"{wl.model.param_count() / 1e9:.3g}B params, {wl.total_train_flops():.3g} FLOPs, "
        f"{wl.steps():,.0f} steps of {wl.training.global_batch} samples, "
        f"{escape(str(wl.training.precision))}"
        + (f", deadline {wl.deadline_days:g} days" if wl.deadline_days else "")
        + f"; {len(plan.rows)} options evaluated, {len(plan.shown)} shown"
    )
    console.print(head)
    console.print(sweep_table(plan))
    for table in chosen_tables(plan):
        console.print(table)
    console.print(decision_panel(plan))
    console.print(notes_group(plan, verbose))
