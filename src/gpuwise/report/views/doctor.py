"""`gpuwise doctor`: a Report as a ranked plan: the top actions first, then the findings grouped by
severity (critical, warnings, advice) with their priority, passes listed at the end."""

from __future__ import annotations

from gpuwise import units
from gpuwise.advise.engine import can_word
from gpuwise.advise.finding import Finding
from gpuwise.i18n import C_, N_, _, shows, worded
from gpuwise.report.document import Block, Bullets, Code, Document, Heading, KeyValues, Styled
from gpuwise.report.model import Report

STATUS_MARK = {"fail": N_("FAIL"), "warn": N_("WARN"), "info": N_("INFO"), "pass": N_("PASS")}
ENV_WORD = {"cloud": N_("cloud"), "onprem": N_("onprem"), "unknown": N_("unknown")}  # the kinds, shown
PRIORITY_WORD = {"high": N_("high"), "medium": N_("medium"), "low": N_("low")}
EXIT_STYLE = {0: "ok", 1: "warn", 2: "fail"}
SECTIONS = (("fail", N_("Critical")), ("warn", N_("Warnings")), ("info", N_("Advice")))
TOP_ACTIONS = 3


def _first_sentence(text: str) -> str:
    """The first sentence of an advice text, in English ('. ') or Chinese ('。')."""
    head = text.split(". ")[0].rstrip(".")
    return head.split("。")[0] if "。" in head else head


def _action(n: int, f: Finding) -> Styled:
    """One line a reader acts on: the finding's title and its first command (or its advice)."""
    rec = f.recommendation
    todo = (
        _("run `{command}`").format(command=rec.commands[0])
        if rec.commands
        else (_first_sentence(rec.text) if rec.text else "")
    )
    style = {"fail": "fail", "warn": "warn"}.get(f.status)
    line = _("{n}. [{mark}] {title}").format(n=n, mark=_(STATUS_MARK[f.status]), title=f.title)
    return Styled(_("{action}: {todo}").format(action=line, todo=todo) if todo else line, style)


def _finding(n: int, f: Finding) -> list[Block]:
    head = _("{n}. [{mark} · {priority}] {title}  ({layer}, {id})").format(
        n=n,
        mark=_(STATUS_MARK[f.status]),
        priority=_(PRIORITY_WORD[f.priority]),
        title=f.title,
        layer=f.layer,
        id=f.id,
    )
    out: list[Block] = [Heading(head, level=3)]
    rows: list[tuple[str, str | Styled]] = [
        (_("measured") if e.kind == "measurement" else _("fact"), f"{e.path} = {units.value(e.value)}")
        for e in f.evidence
    ]
    rec = f.recommendation
    if rec.text:
        rows.append((_("do"), rec.text))
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
        can = can_word(ctl.can)
        text = (
            _("{can} — {reason}; instead: {alternative}").format(
                can=can, reason=ctl.reason, alternative=ctl.alternative
            )
            if ctl.alternative
            else _("{can} — {reason}").format(can=can, reason=ctl.reason)
        )
        rows.append((_("can change here"), Styled(text, "accent")))
    if f.expected_gain:
        rows.append((_("gain"), f"{f.expected_gain.text} [{f.expected_gain.source}]"))
    if f.affects_numerics:
        rows.append(
            (_("note"), Styled(_("changes numerics/convergence — validate the loss curve"), "accent"))
        )
    rows.append((_("source"), Styled(f.source, "dim")))
    rows += [(_("reference"), Styled(r, "dim")) for r in f.references]
    out.append(KeyValues(rows))
    return out


@shows
def doctor_view(report: Report) -> Document:
    data = report.to_json_dict()  # from the model as it is: JSON stays English under every --lang
    report = worded(report)
    env, s, m = report.env, report.summary, report.measurements
    how = _("set with --env") if env.overridden else _("detected")
    count = len(m.get("results", [])) if m else 0
    title = _("gpuwise doctor — {host}").format(host=report.hostname or _("unknown host"))
    blocks: list[Block] = [
        Heading(title),
        KeyValues(
            [
                (
                    _("environment"),
                    _("{kind} ({how}; detected {detected}: {reason})").format(
                        kind=_(ENV_WORD.get(env.kind, env.kind)),
                        how=how,
                        detected=_(ENV_WORD.get(env.detected, env.detected)),
                        reason=env.reason or _("no reason given"),
                    ),
                ),
                (
                    C_("input", "source"),
                    report.source if report.source not in (None, "", "live") else _("live"),
                ),
                (
                    _("measurements"),
                    f"{count}"
                    if m
                    else _("{count} (none: add --bench quick or --bench-results FILE)").format(count=count),
                ),
                (
                    _("verdict"),
                    Styled(
                        _("{verdict} (exit {code})").format(verdict=s.verdict, code=s.exit_code),
                        EXIT_STYLE.get(s.exit_code),
                    ),
                ),
            ]
        ),
    ]
    actionable = [f for f in report.findings if f.status != "pass"]  # ranked: severity, then priority
    if actionable:
        blocks.append(Heading(_("Top actions ({n})").format(n=min(TOP_ACTIONS, len(actionable))), level=2))
        blocks.append(Bullets([_action(n, f) for n, f in enumerate(actionable[:TOP_ACTIONS], 1)]))
    chart, table = _measured(report)
    blocks += chart  # html draws it under the top actions; its numbers are in the table at the end
    n = 0
    for status, label in SECTIONS:
        group = [f for f in actionable if f.status == status]
        if group:
            blocks.append(Heading(_("{section} ({n})").format(section=_(label), n=len(group)), level=2))
        for f in group:
            n += 1
            blocks += _finding(n, f)
    passes = [f for f in report.findings if f.status == "pass"]
    if passes:
        blocks.append(Heading(_("Checked and OK ({n})").format(n=len(passes)), level=2))
        blocks.append(
            Bullets([Styled(_("{title}  ({id})").format(title=f.title, id=f.id), "ok") for f in passes])
        )
    blocks += table
    return Document(
        title=title,
        blocks=blocks,
        data=data,
    )


def _measured(report: Report) -> tuple[list[Block], list[Block]]:
    """The bench results the findings read (--bench, --bench-results): the % of peak chart, and a table."""
    if not report.measurements or not report.measurements.get("results"):
        return [], []
    from pydantic import ValidationError

    from gpuwise.documents.bench import BenchReport
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
        Heading(_("Measured vs peak"), level=2),
        layer_table("measured", measured),
    ]
