"""Render a doctor Report as Markdown (for tickets, PRs and wikis)."""

from __future__ import annotations

from gpuwise.advise.finding import PRIORITY_ORDER
from gpuwise.report.model import Report
from gpuwise.report.render_text import STATUS_MARK, fmt_value


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_md(report: Report) -> str:
    """The plan as Markdown: one section per priority, one subsection per finding."""
    env, s = report.env, report.summary
    out = [
        f"# gpuwise doctor — {report.hostname or 'unknown host'}",
        "",
        f"- environment: **{env.kind}** ({'set with --env' if env.overridden else 'detected'}; "
        f"detected {env.detected}: {env.reason or 'no reason given'})",
        f"- source: `{report.source or 'live'}`",
        f"- verdict: **{s.verdict}** (exit {s.exit_code})",
        "",
    ]
    n = 0
    for prio in PRIORITY_ORDER:
        group = [f for f in report.findings if f.priority == prio and f.status != "pass"]
        if not group:
            continue
        out += [f"## {prio.capitalize()} priority", ""]
        for f in group:
            n += 1
            out += [f"### {n}. [{STATUS_MARK[f.status]}] {f.title}", "", f"`{f.id}` · layer {f.layer}", ""]
            if f.evidence:
                out += ["| evidence | value |", "|---|---|"]
                out += [
                    f"| {'measured ' if e.kind == 'measurement' else ''}`{_cell(e.path)}` | {_cell(fmt_value(e.value))} |"
                    for e in f.evidence
                ]
                out.append("")
            if f.recommendation.text:
                out += [f.recommendation.text, ""]
            lines = (
                list(f.recommendation.commands)
                + list(f.recommendation.config)
                + [f"export {k}={v}" for k, v in f.recommendation.env.items()]
            )
            if lines:
                out += ["```", *lines, "```", ""]
            ctl = f.controllable
            if ctl.can != "yes":
                out.append(
                    f"- can change here: **{ctl.can}** — {ctl.reason}"
                    + (f"; instead: {ctl.alternative}" if ctl.alternative else "")
                )
            if f.expected_gain:
                out.append(f"- expected gain: {f.expected_gain.text} ({f.expected_gain.source})")
            if f.affects_numerics:
                out.append("- changes numerics/convergence: validate the loss curve")
            out.append(f"- source: {f.source}")
            out += [f"- reference: {r}" for r in f.references]
            out.append("")
    passes = [f for f in report.findings if f.status == "pass"]
    if passes:
        out += ["## Checked and OK", ""] + [f"- {f.title} (`{f.id}`)" for f in passes] + [""]
    return "\n".join(out)
