"""Render a doctor Report as a ranked plan in the terminal (Rich), grouped by priority."""

from __future__ import annotations

import textwrap
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


def _wrap(
    console: Console, prefix: str, text: str, style: str | None = None, indent: int | None = None
) -> None:
    """Print `prefix + text` wrapped to the console width, continuation lines aligned under the text."""
    pad = " " * (len(prefix) if indent is None else indent)
    lines = textwrap.wrap(
        text,
        width=console.width,
        initial_indent=prefix,
        subsequent_indent=pad,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [prefix]
    for line in lines:
        console.print(escape(line), style=style, highlight=False, soft_wrap=True)


def _finding(console: Console, n: int, f: Finding) -> None:
    head = Text(f"{n:>2}. ")
    head.append(f"[{STATUS_MARK[f.status]}]", style=STATUS_STYLE[f.status])
    head.append(f" {f.title}", style="bold")
    head.append(f"  ({f.layer}, {f.id})", style="dim")
    console.print(head, soft_wrap=True)
    for e in f.evidence:
        tag = "measured" if e.kind == "measurement" else "fact"
        _wrap(console, f"      {tag}: ", f"{e.path} = {fmt_value(e.value)}", indent=8)
    if f.recommendation.text:
        _wrap(console, "      do: ", f.recommendation.text)
    for c in f.recommendation.commands:
        console.print(escape(f"        $ {c}"), highlight=False, soft_wrap=True)
    for line in f.recommendation.config:
        console.print(escape(f"        | {line}"), highlight=False, soft_wrap=True)
    for k, v in f.recommendation.env.items():
        console.print(escape(f"        export {k}={v}"), highlight=False, soft_wrap=True)
    ctl = f.controllable
    if ctl.can != "yes":
        msg = f"{ctl.can} — {ctl.reason}" + (f"; instead: {ctl.alternative}" if ctl.alternative else "")
        _wrap(console, "      can change here: ", msg, style="magenta", indent=8)
    if f.expected_gain:
        _wrap(console, "      gain: ", f"{f.expected_gain.text} [{f.expected_gain.source}]", indent=8)
    if f.affects_numerics:
        console.print("      note: changes numerics/convergence — validate the loss curve", style="magenta")
    _wrap(console, "      source: ", f.source, style="dim", indent=8)


def render_text(report: Report, width: int = 110, color: bool = False) -> str:
    """The plan as text: header, findings by priority (passes listed compactly at the end)."""
    buf = StringIO()
    console = Console(
        file=buf,
        width=width,
        force_terminal=color,
        no_color=not color,
        highlight=False,
        emoji=False,
        soft_wrap=False,
    )
    env = report.env
    console.print(Text(f"gpuwise doctor — {report.hostname or 'unknown host'}", style="bold"))
    how = "set with --env" if env.overridden else "detected"
    _wrap(
        console,
        "environment: ",
        f"{env.kind} ({how}; detected {env.detected}: {env.reason or 'no reason given'})",
        indent=4,
    )
    console.print(escape(f"source: {report.source or 'live'}"), highlight=False)
    m = report.measurements
    console.print(
        f"measurements: {len(m.get('results', [])) if m else 0}"
        + ("" if m else " (none: add --bench quick or --bench-results FILE)"),
        highlight=False,
    )
    s = report.summary
    console.print(
        Text(
            f"verdict: {s.verdict} (exit {s.exit_code})",
            style=STATUS_STYLE["fail" if s.exit_code == 2 else "warn" if s.exit_code == 1 else "pass"],
        )
    )
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
