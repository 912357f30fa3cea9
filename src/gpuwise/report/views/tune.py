"""`gpuwise tune`: the trials table, the verdict against the noise, and the winner as paste-ready code."""

from __future__ import annotations

from gpuwise import units
from gpuwise.i18n import C_, _, shows, worded
from gpuwise.report.document import (
    Block,
    Bullets,
    Chart,
    Code,
    Column,
    Document,
    Heading,
    KeyValues,
    Paragraph,
    Series,
    Styled,
    Table,
    cell_text,
)
from gpuwise.tune.knobs import numerics_label
from gpuwise.tune.model import TrialRecord, TuneResult
from gpuwise.tune.trial import MAX_LINE

STATUS_STYLE = {"ok": "ok", "failed": "fail", "pruned": "dim", "skipped": "dim", "unreliable": "warn"}


def _failure(kind: str | None) -> str:
    """How a trial failed (TrialRecord.failure, the JSON's values: the English word is the value itself)."""
    words = {
        "oom": C_("failure", "oom"),
        "timeout": C_("failure", "timeout"),
        "compile": C_("failure", "compile"),
        "distributed": C_("failure", "distributed"),
        "crash": C_("failure", "crash"),
        "error": C_("failure", "error"),
        "interrupted": C_("failure", "interrupted"),
    }
    return words.get(kind, str(kind))


def _status(r: TrialRecord) -> str:
    """A trial's status (ok, failed, skipped, pruned, unreliable: the JSON's values) in words."""
    if r.status == "failed":
        return _("failed ({failure})").format(failure=_failure(r.failure))
    words = {
        "ok": C_("trial", "ok"),
        "pruned": C_("trial", "pruned"),
        "skipped": C_("trial", "skipped"),
        "unreliable": C_("trial", "unreliable"),
    }
    return words.get(r.status, r.status)


def _setting(r: TrialRecord) -> str:
    if r.role in ("baseline", "baseline-end"):
        return _("baseline") if r.role == "baseline" else _("baseline (again, at the end)")
    text = ", ".join(f"{k}={v}" for k, v in r.changes.items()) or _("baseline values")
    if r.role == "reduction":
        what = _("without {knob}").format(knob=r.dropped) if r.dropped else _("the winner again")
        return _("{setting} (reduction: {what})").format(setting=text, what=what)
    return text


def _numerics(r: TrialRecord) -> str | Styled:
    if r.guard_ok is None:
        return numerics_label(r.numerics)
    text = _("{numerics}, loss diff {diff}").format(
        numerics=numerics_label(r.numerics), diff=units.percent(r.guard_max_rel_diff, 2)
    )
    return Styled(text, None if r.guard_ok else "warn")


def _row(r: TrialRecord, winner: int | None) -> list:
    mark = Styled(f"{r.number}*", "accent") if r.number == winner else str(r.number)
    status = Styled(_status(r), STATUS_STYLE[r.status])
    if r.samples_per_s is None:
        return [mark, _setting(r), status, "", "", "", _numerics(r)]
    noise = (r.samples_per_s_high - r.samples_per_s_low) / 2
    rate = _("{rate} +/-{noise}").format(rate=units.number(r.samples_per_s), noise=units.number(noise))
    speed: str | Styled = ""
    if r.speedup is not None:
        speed = f"{r.speedup:.2f}x [{r.speedup_low:.2f}-{r.speedup_high:.2f}]"
        speed = Styled(speed, "ok") if r.beats_baseline else speed
    if r.status == "unreliable":  # shown, never as a clean result
        rate, speed = Styled(rate, "dim"), Styled(f"({cell_text(speed)})" if speed else "", "dim")
    return [mark, _setting(r), status, rate, speed, units.size(r.peak_memory_bytes), _numerics(r)]


def trials_table(result: TuneResult) -> Table:
    columns = [
        Column("#"),
        Column(_("setting")),
        Column(_("status")),
        Column(_("samples/s +/-{confidence}").format(confidence="95%"), "right"),
        Column(_("speedup [{confidence}]").format(confidence="95%"), "right"),
        Column(_("memory"), "right"),
        Column(_("numerics")),
    ]
    memory_kind = next((r.memory_kind for r in result.trials if r.memory_kind), "")
    caption = _(
        "* the winner. speedup: baseline mean step / this mean step, {confidence} bootstrap interval; "
        "memory: {memory_kind}; numerics: the declared effect and the first steps' loss vs the baseline's. "
        "unreliable: a +/- larger than the value, shown in parentheses, not a result."
    ).format(confidence="95%", memory_kind=_(memory_kind) if memory_kind else "")
    return Table(columns, [_row(r, result.winner) for r in result.trials], title=_("Trials"), caption=caption)


def contributions_table(result: TuneResult) -> Table:
    """What each change of the search's winner is worth: the setting with it vs without it."""
    why = {
        "measured": _("measured"),
        "removal-failed": _("the setting without it failed"),
        "only-change": _("the only change: its speedup over the baseline"),
    }
    rows = []
    for c in result.contributions:
        worth = (
            f"{c.speedup:.2f}x [{c.speedup_low:.2f}-{c.speedup_high:.2f}]" if c.speedup is not None else ""
        )
        kept = Styled(_("kept"), "ok") if c.kept else Styled(_("dropped"), "dim")
        rows.append([f"{c.knob}={c.value}", worth, kept, why[c.why], str(c.trial)])
    columns = [
        Column(_("change")),
        Column(_("worth [{confidence}]").format(confidence="95%"), "right"),
        Column(""),
        Column(_("how")),
        Column("#", "right"),
    ]
    caption = _(
        "worth: the setting's mean step without the change / with it, measured in this run; a change is "
        "kept when the interval's lower end is above {gain}"
    ).format(gain="1.05x")
    return Table(columns, rows, title=_("What each change is worth"), caption=caption)


def _verdicts(result: TuneResult) -> Bullets:
    outcome = {
        "gain": _("measured gain"),
        "within-noise": _("within noise"),
        "failed": C_("trial", "failed"),
        "pruned": C_("trial", "pruned"),
        "unreliable": C_("trial", "unreliable"),
        "skipped": C_("trial", "skipped"),
        "held": _("waited for data loading"),
        "not-tried": _("not tried"),
    }
    return Bullets([f"{v.knob}: {outcome[v.outcome]} — {v.detail}" for v in result.knobs])


def _skipped(result: TuneResult) -> Bullets:
    """One line per reason; a knob whose every value was left out is named without values."""
    from gpuwise.tune.knobs import by_name

    knobs = by_name()
    by_reason: dict[str, dict[str, list[str]]] = {}
    for s in result.skipped:
        by_reason.setdefault(s.reason, {}).setdefault(s.knob, []).append(s.value)
    lines = []
    for reason, per_knob in by_reason.items():
        names = []
        for knob, values in per_knob.items():
            whole = values == ["*"] or (knob in knobs and len(values) == len(knobs[knob].values))
            names.append(knob if whole else f"{knob}={'/'.join(values)}")
        lines.append(f"{', '.join(names)}: {reason}")
    return Bullets(lines)


@shows
def view(result: TuneResult) -> Document:
    data = result.to_json_dict()  # from the model as it is: JSON stays English under every --lang
    result = worded(result)
    memory_short = (
        [(_("memory short"), _("{why}: sharding searched").format(why=result.memory_short))]
        if result.memory_short
        else []
    )
    blocks: list[Block] = [
        KeyValues(
            [
                (_("workload"), result.workload),
                (
                    _("device"),
                    _("{device}, {nproc} process(es)").format(device=result.device, nproc=result.nproc),
                ),
                (_("global batch"), str(result.batch_size)),
                (
                    _("steps per trial"),
                    _("{warmup} warm-up + {timed} timed").format(
                        warmup=result.warmup_steps, timed=result.timed_steps
                    ),
                ),
                (
                    _("baseline"),
                    _("{rate} samples/s").format(rate=units.number(result.baseline_samples_per_s)),
                ),
                (
                    _("baseline drift"),
                    _("{drift} between its two runs").format(drift=units.percent(result.baseline_drift, 1)),
                ),
                (
                    _("search order"),
                    _("{order} ({why})").format(
                        order=" > ".join(result.search_order), why=result.order_reason
                    ),
                ),
                (_("study"), _("{study} in {storage}").format(study=result.study, storage=result.storage)),
            ]
            + memory_short
        ),
        trials_table(result),
    ]
    unfinished = [r for r in result.trials if r.status != "ok" and r.reason]
    if unfinished:
        words = {
            "failed": C_("trial", "failed"),
            "pruned": C_("trial", "pruned"),
            "skipped": C_("trial", "skipped"),
            "unreliable": C_("trial", "unreliable"),
        }
        blocks.append(
            Bullets(
                [
                    _("trial {number} {status}: {reason}").format(
                        number=r.number, status=words[r.status], reason=r.reason
                    )
                    for r in unfinished
                ]
            )
        )
    ignored = [r for r in result.trials if r.ignored_lines]
    if ignored:
        blocks.append(
            Bullets(
                [
                    Styled(
                        _(
                            "trial {number}: {count} progress line(s) ignored (values not finite and "
                            "positive, or a line over {limit} bytes)"
                        ).format(number=r.number, count=r.ignored_lines, limit=MAX_LINE),
                        "warn",
                    )
                    for r in ignored
                ]
            )
        )
    if result.held:
        blocks.append(Paragraph(result.held, "dim"))
    blocks.append(Paragraph(result.verdict, "ok" if result.winner is not None else "warn"))
    if result.contributions and (result.reduced_from is not None or result.winner is not None):
        blocks.append(contributions_table(result))
    if result.knobs and result.winner is None:
        blocks += [Heading(_("Per knob"), 2), _verdicts(result)]
    if result.winner is not None:
        blocks.append(Heading(_("Best setting"), 2))
        if result.snippet_python:
            blocks.append(Code(result.snippet_python, "python"))
        if result.snippet_env:
            blocks.append(Code(result.snippet_env, "sh"))
        blocks.append(Code(result.snippet_yaml, "yaml"))
        blocks.append(
            Bullets([f"{k}: {result.sources[k]}" for k in result.best_changes if k in result.sources])
        )
    if result.skipped:
        blocks += [Heading(_("Not searched here"), 2), _skipped(result)]
    ok = [r for r in result.trials if r.samples_per_s is not None]
    blocks.append(
        Chart(
            "bar",
            _("Throughput per trial"),
            C_("chart", "trial"),
            "samples/s",
            [
                Series(
                    "samples/s",
                    [r.number for r in ok],
                    [r.samples_per_s for r in ok],
                    [(r.samples_per_s_high - r.samples_per_s_low) / 2 for r in ok],
                )
            ],
        )
    )
    return Document(title=f"gpuwise tune: {result.workload}", blocks=blocks, data=data)
