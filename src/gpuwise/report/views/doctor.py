"""`gpuwise doctor`: a Report as a ranked plan: the top actions first, then the findings grouped by
severity (critical, warnings, advice) with their priority, passes listed at the end."""

from __future__ import annotations

from gpuwise import units
from gpuwise.advise.finding import Finding
from gpuwise.report.document import Block, Bullets, Code, Document, Heading, KeyValues, Styled
from gpuwise.report.model import Report

STATUS_MARK = {"fail": "FAIL", "warn": "WARN", "info": "INFO", "pass": "PASS"}
EXIT_STYLE = {0: "ok", 1: "warn", 2: "fail"}
SECTIONS = (("fail", "Critical"), ("warn", "Warnings"), ("info", "Advice"))
TOP_ACTIONS = 3


def _action(n: int, f: Finding) -> Styled:
    """One line a reader acts on: the finding's title and its first command (or its advice)."""
    rec = f.recommendation
    todo = (
        f"run `{rec.commands[0]}`"
        if rec.commands
        else (rec.text.split(". ")[0].rstrip(".") if rec.text else "")
    )
    style = {"fail": "fail", "warn": "warn"}.get(f.status)
    return Styled(f"{n}. [{STATUS_MARK[f.status]}] {f.title}" + (f": {todo}" if todo else ""), style)


def _finding(n: int, f: Finding) -> list[Block]:
    head = f"{n}. [{STATUS_MARK[f.status]} · {f.priority}] {f.title}  ({f.layer}, {f.id})"
    out: list[Block] = [Heading(head, level=3)]
    rows: list[tuple[str, str | Styled]] = [
        ("measured" if e.kind == "measurement" else "fact", f"{e.path} = {units.value(e.value)}")
        for e in f.evidence
    ]
    rec = f.recommendation
    if rec.text:
        rows.append(("do", rec.text))
    if rows:
        out.append(KeyValues(rows))
    if rec.commands:
        out.append(Code(list(rec.commands), lang="sh"))
    if rec.config:
        out.append(Code(list(rec.config)))
    if rec.env:
        out.append(Code([f"export {k}={v}" for k, v in rec.env.items()], lang="sh"))
    rows = []
    ctl = f.controllable
    if ctl.can != "yes":
        instead = f"; instead: {ctl.alternative}" if ctl.alternative else ""
        rows.append(("can change here", Styled(f"{ctl.can} — {ctl.reason}{instead}", "accent")))
    if f.expected_gain:
        rows.append(("gain", f"{f.expected_gain.text} [{f.expected_gain.source}]"))
    if f.affects_numerics:
        rows.append(("note", Styled("changes numerics/convergence — validate the loss curve", "accent")))
    rows.append(("source", Styled(f.source, "dim")))
    rows += [("reference", Styled(r, "dim")) for r in f.references]
    out.append(KeyValues(rows))
    return out


def doctor_view(report: Report) -> Document:
    env, s, m = report.env, report.summary, report.measurements
    how = "set with --env" if env.overridden else "detected"
    count = len(m.get("results", [])) if m else 0
    blocks: list[Block] = [
        Heading(f"gpuwise doctor — {report.hostname or 'unknown host'}"),
        KeyValues(
            [
                (
                    "environment",
                    f"{env.kind} ({how}; detected {env.detected}: {env.reason or 'no reason given'})",
                ),
                ("source", report.source or "live"),
                (
                    "measurements",
                    f"{count}" + ("" if m else " (none: add --bench quick or --bench-results FILE)"),
                ),
                ("verdict", Styled(f"{s.verdict} (exit {s.exit_code})", EXIT_STYLE.get(s.exit_code))),
            ]
        ),
    ]
    actionable = [f for f in report.findings if f.status != "pass"]  # ranked: severity, then priority
    if actionable:
        blocks.append(Heading(f"Top actions ({min(TOP_ACTIONS, len(actionable))})", level=2))
        blocks.append(Bullets([_action(n, f) for n, f in enumerate(actionable[:TOP_ACTIONS], 1)]))
    chart, table = _measured(report)
    blocks += chart  # html draws it under the top actions; its numbers are in the table at the end
    n = 0
    for status, label in SECTIONS:
        group = [f for f in actionable if f.status == status]
        if group:
            blocks.append(Heading(f"{label} ({len(group)})", level=2))
        for f in group:
            n += 1
            blocks += _finding(n, f)
    passes = [f for f in report.findings if f.status == "pass"]
    if passes:
        blocks.append(Heading(f"Checked and OK ({len(passes)})", level=2))
        blocks.append(Bullets([Styled(f"{f.title}  ({f.id})", "ok") for f in passes]))
    blocks += table
    return Document(
        title=f"gpuwise doctor — {report.hostname or 'unknown host'}",
        blocks=blocks,
        data=report.to_json_dict(),
    )


def _measured(report: Report) -> tuple[list[Block], list[Block]]:
    """The bench results the findings read (--bench, --bench-results): the % of peak chart, and a table."""
    if not report.measurements or not report.measurements.get("results"):
        return [], []
    from pydantic import ValidationError

    from gpuwise.bench.models import BenchReport
    from gpuwise.report.views.bench import layer_table
    from gpuwise.report.views.charts import bench_peak_chart

    try:
        bench = BenchReport.model_validate(report.measurements)
    except ValidationError:  # the JSON keeps them as read; the findings already quote what they use
        return [], []
    measured = [m for m in bench.results if m.status == "ok"]
    if not measured:
        return [], []
    return list(bench_peak_chart(bench)), [
        Heading("Measured vs peak", level=2),
        layer_table("measured", measured),
    ]
