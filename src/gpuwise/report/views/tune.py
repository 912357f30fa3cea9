"""`gpuwise tune`: the trials table, the verdict against the noise, and the winner as paste-ready code."""

from __future__ import annotations

from gpuwise import units
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
)
from gpuwise.tune.model import TrialRecord, TuneResult

STATUS_STYLE = {"ok": "ok", "failed": "fail", "pruned": "dim"}


def _setting(r: TrialRecord) -> str:
    if r.role in ("baseline", "baseline-end"):
        return "baseline" if r.role == "baseline" else "baseline (again, at the end)"
    return ", ".join(f"{k}={v}" for k, v in r.changes.items()) or "baseline values"


def _numerics(r: TrialRecord) -> str | Styled:
    if r.guard_ok is None:
        return r.numerics
    diff = f"loss diff {units.percent(r.guard_max_rel_diff, 2)}"
    return Styled(f"{r.numerics}, {diff}", None if r.guard_ok else "warn")


def _row(r: TrialRecord, winner: int | None) -> list:
    mark = Styled(f"{r.number}*", "accent") if r.number == winner else str(r.number)
    if r.status != "ok":
        why = Styled(r.status if r.status == "pruned" else f"failed ({r.failure})", STATUS_STYLE[r.status])
        return [mark, _setting(r), why, "", "", _numerics(r)]
    noise = (r.samples_per_s_high - r.samples_per_s_low) / 2
    speed: str | Styled = ""
    if r.speedup is not None:
        speed = f"{r.speedup:.2f}x [{r.speedup_low:.2f}-{r.speedup_high:.2f}]"
        speed = Styled(speed, "ok") if r.beats_baseline else speed
    return [
        mark,
        _setting(r),
        f"{units.number(r.samples_per_s)} +/-{units.number(noise)}",
        speed,
        units.size(r.peak_memory_bytes),
        _numerics(r),
    ]


def trials_table(result: TuneResult) -> Table:
    columns = [
        Column("#"),
        Column("setting"),
        Column("samples/s +/-95%", "right"),
        Column("speedup [95%]", "right"),
        Column("memory", "right"),
        Column("numerics"),
    ]
    memory_kind = next((r.memory_kind for r in result.trials if r.memory_kind), "")
    return Table(
        columns,
        [_row(r, result.winner) for r in result.trials],
        title="Trials",
        caption=f"* the winner. speedup: baseline mean step / this mean step, 95% bootstrap interval; "
        f"memory: {memory_kind}; numerics: the declared effect and the first steps' loss vs the baseline's.",
    )


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


def view(result: TuneResult) -> Document:
    blocks: list[Block] = [
        KeyValues(
            [
                ("workload", result.workload),
                ("device", f"{result.device}, {result.nproc} process(es)"),
                ("global batch", str(result.batch_size)),
                ("steps per trial", f"{result.warmup_steps} warm-up + {result.timed_steps} timed"),
                ("baseline", f"{units.number(result.baseline_samples_per_s)} samples/s"),
                ("baseline drift", units.percent(result.baseline_drift, 1) + " between its two runs"),
                ("search order", f"{' > '.join(result.search_order)} ({result.order_reason})"),
                ("study", f"{result.study} in {result.storage}"),
            ]
            + ([("memory short", f"{result.memory_short}: sharding searched")] if result.memory_short else [])
        ),
        trials_table(result),
    ]
    unfinished = [r for r in result.trials if r.status != "ok"]
    if unfinished:
        blocks.append(Bullets([f"trial {r.number} {r.status}: {r.reason}" for r in unfinished]))
    blocks.append(Paragraph(result.verdict, "ok" if result.winner is not None else "warn"))
    if result.winner is not None:
        blocks.append(Heading("Best setting", 2))
        if result.snippet_python:
            blocks.append(Code(result.snippet_python, "python"))
        if result.snippet_env:
            blocks.append(Code(result.snippet_env, "sh"))
        blocks.append(Code(result.snippet_yaml, "yaml"))
        blocks.append(
            Bullets([f"{k}: {result.sources[k]}" for k in result.best_changes if k in result.sources])
        )
    if result.skipped:
        blocks += [Heading("Not searched here", 2), _skipped(result)]
    ok = [r for r in result.trials if r.samples_per_s is not None]
    blocks.append(
        Chart(
            "bar",
            "Throughput per trial",
            "trial",
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
    return Document(title=f"gpuwise tune: {result.workload}", blocks=blocks, data=result.to_json_dict())
