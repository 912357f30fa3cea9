"""Render a doctor Report as a ranked plan in the terminal (Rich), grouped by priority."""

from __future__ import annotations

from io import StringIO

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from gpuwise.advise.finding import PRIORITY_ORDER, Finding
from gpuwise.report.model import Report

STATUS_STYLE = {"fail": "bold red", "warn": "yellow", "info": "cyan", "pass": "green"}
STATUS_MARK = {"fail": "FAIL", "warn": "WARN", "info": "INFO", "pass": "PASS"}


def fmt_value(value) -> str:
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(map(str, value)) if value else "none"
    return str(value)


def _finding(console: Console, n: int, f: Finding) -> None:
    head = Text(f"{n:>2}. ")
    head.append(f"[{STATUS_MARK[f.status]}]", style=STATUS_STYLE[f.status])
    head.append(f" {f.title}", style="bold")
    head.append(f"  ({f.layer}, {f.id})", style="dim")
    console.print(head)
    for e in f.evidence:
        tag = "measured" if e.kind == "measurement" else "fact"
        console.print(f"      {tag}: {escape(e.path)} = {escape(fmt_value(e.value))}", highlight=False)
    if f.recommendation.text:
        console.print(f"      do: {escape(f.recommendation.text)}", highlight=False)
    for c in f.recommendation.commands:
        console.print(f"        $ {escape(c)}", highlight=False)
    for line in f.recommendation.config:
        console.print(f"        | {escape(line)}", highlight=False)
    for k, v in f.recommendation.env.items():
        console.print(f"        export {escape(k)}={escape(v)}", highlight=False)
    ctl = f.controllable
    if ctl.can != "yes":
        msg = f"      can change here: {ctl.can} — {ctl.reason}"
        if ctl.alternative:
            msg += f"; instead: {ctl.alternative}"
        console.print(escape(msg), style="magenta", highlight=False)
    if f.expected_gain:
        console.print(escape(f"      gain: {f.expected_gain.text} [{f.expected_gain.source}]"), highlight=False)
    if f.affects_numerics:
        console.print("      note: changes numerics/convergence — validate the loss curve", style="magenta")
    console.print(escape(f"      source: {f.source}"), style="dim", highlight=False)


def render_text(report: Report, width: int = 110, color: bool = False) -> str:
    """The plan as text: header, findings by priority (passes listed compactly at the end)."""
    buf = StringIO()
    console = Console(file=buf, width=width, force_terminal=color, no_color=not color, highlight=False,
                      emoji=False, soft_wrap=False)
    env = report.env
    console.print(Text(f"gpuwise doctor — {report.hostname or 'unknown host'}", style="bold"))
    how = "set with --env" if env.overridden else "detected"
    console.print(escape(f"environment: {env.kind} ({how}; detected {env.detected}: {env.reason or 'no reason given'})"),
                  highlight=False)
    console.print(escape(f"source: {report.source or 'live'}"), highlight=False)
    m = report.measurements
    console.print(f"measurements: {len(m.get('results', [])) if m else 0}"
                  + ("" if m else " (none: add --bench quick or --bench-results FILE)"), highlight=False)
    s = report.summary
    console.print(Text(f"verdict: {s.verdict} (exit {s.exit_code})",
                       style=STATUS_STYLE["fail" if s.exit_code == 2 else "warn" if s.exit_code == 1 else "pass"]))
    actionable = [f for f in report.findings if f.status != "pass"]
    n = 0
    for prio in PRIORITY_ORDER:
        group = [f for f in actionable if f.priority == prio]
        if not group:
            continue
        console.print()
        console.print(Text(f"{prio.upper()} PRIORITY ({len(group)})", style="bold underline"))
        for f in group:
            n += 1
            _finding(console, n, f)
    passes = [f for f in report.findings if f.status == "pass"]
    if passes:
        console.print()
        console.print(Text(f"CHECKED AND OK ({len(passes)})", style="bold underline"))
        for f in passes:
            console.print(escape(f"   - {f.title}  ({f.id})"), style="green", highlight=False)
    return buf.getvalue()
