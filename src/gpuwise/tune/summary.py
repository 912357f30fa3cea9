"""From the stored study to a TuneResult: throughput intervals, speedups, the numerics guard, the winner."""

from __future__ import annotations

from gpuwise.i18n import _
from gpuwise.tune import knobs, snippet, stats
from gpuwise.tune.model import SkippedKnob, TrialRecord, TuneResult
from gpuwise.tune.policy import category_order
from gpuwise.tune.search import TuneOptions, counted


def _changes(params: dict, space: dict) -> dict:
    return {k: v for k, v in params.items() if k in space and v != space[k][0]}


def _record(t, space: dict, opts: TuneOptions, base_s: list[float], base_losses: list[float], drift: float):
    a = t.user_attrs
    params = dict(t.params)
    effect = knobs.numerics_of(params)
    rec = TrialRecord(
        number=t.number,
        role=a.get("role", "search"),
        changes=_changes(params, space),
        status=a.get("status", "failed"),
        failure=a.get("failure"),
        reason=reworded(a.get("reason"), a.get("reason_msg")),
        numerics=effect,
        wall_s=a.get("wall_s", 0.0),
        ignored_lines=a.get("ignored_lines", 0),
    )
    info = a.get("info") or {}
    rec.peak_memory_bytes, rec.memory_kind = info.get("peak_memory_bytes"), info.get("memory_kind")
    seconds = a.get("seconds") or []
    if rec.status != "ok" or not seconds:
        return rec
    samples = opts.batch_size * opts.nproc
    tp = stats.throughput(seconds, samples, seed=t.number)
    rec.samples_per_s, rec.samples_per_s_low, rec.samples_per_s_high = tp.samples_per_s, tp.low, tp.high
    rec.timed_steps = tp.steps
    rec.data_wait_fraction = sum(a.get("data_wait_s") or []) / sum(seconds)
    if base_s:
        sp = stats.speedup(seconds, base_s, seed=t.number)
        rec.speedup, rec.speedup_low, rec.speedup_high = sp.value, sp.low, sp.high
        rec.beats_baseline = rec.role not in ("baseline", "baseline-end") and stats.beats_baseline(sp, drift)
    if base_losses and a.get("losses"):
        guard = stats.numerics_guard(a["losses"], base_losses, effect, opts.guard_steps)
        rec.guard_max_rel_diff, rec.guard_tolerance, rec.guard_ok = (
            guard.max_rel_diff,
            guard.tolerance,
            guard.ok,
        )
    return rec


def reworded(reason: str | None, msg: list | None) -> str | None:
    """A reason the study keeps in English, in the reader's language (trial.because made `msg`)."""
    if not msg:
        return reason  # quoted (an exception's text) or stored before reasons kept their message
    msgid, args = msg
    return _(msgid).format(**args)


class _Stored:
    """The end baseline, stored as a study attribute, shaped like a FrozenTrial for _record."""

    def __init__(self, attrs: dict):
        self.number, self.params, self.user_attrs = attrs["number"], attrs["params"], attrs


def summarize(
    study, opts: TuneOptions, space: dict, skipped: list, tokens_per_sample: int | None
) -> TuneResult:
    trials = list(counted(study))
    if "baseline_end" in study.user_attrs:
        trials.append(_Stored(study.user_attrs["baseline_end"]))
    by_role = {t.user_attrs.get("role"): t for t in trials if t.user_attrs.get("status") == "ok"}
    first, last = by_role.get("baseline"), by_role.get("baseline-end")
    base_s = (first.user_attrs["seconds"] if first else []) + (last.user_attrs["seconds"] if last else [])
    drift = stats.drift(first.user_attrs["seconds"], last.user_attrs["seconds"]) if first and last else 0.0
    base_losses = first.user_attrs.get("losses", []) if first else []
    records = [_record(t, space, opts, base_s, base_losses, drift) for t in trials]
    if tokens_per_sample:
        for r in records:
            r.tokens_per_s = r.samples_per_s * tokens_per_sample if r.samples_per_s else None
    order, why = category_order(opts.prior or _data_prior(records))
    result = TuneResult(
        workload=opts.target,
        device=opts.device,
        batch_size=opts.batch_size,
        nproc=opts.nproc,
        warmup_steps=opts.warmup,
        timed_steps=opts.steps,
        study=opts.study,
        storage=str(opts.storage),
        keep_numerics=opts.keep_numerics,
        search_order=order,
        order_reason=why,
        memory_short=reworded(study.user_attrs.get("memory_short"), study.user_attrs.get("memory_short_msg")),
        baseline_samples_per_s=stats.throughput(base_s, opts.batch_size * opts.nproc).samples_per_s
        if base_s
        else None,
        baseline_drift=drift if first and last else None,
        trials=records,
        skipped=[SkippedKnob(knob=s.knob, value=str(s.value), reason=s.reason) for s in skipped],
        sources={k.name: k.source for k in knobs.catalogue()},
    )
    _choose(result, records, bool(base_s))
    return result


def _data_prior(records: list[TrialRecord]) -> str | None:
    from gpuwise.tune.search import DATA_BOUND_FRACTION

    base = next((r for r in records if r.role == "baseline" and r.data_wait_fraction is not None), None)
    return "data" if base and base.data_wait_fraction > DATA_BOUND_FRACTION else None


def _choose(result: TuneResult, records: list[TrialRecord], have_baseline: bool) -> None:
    if not have_baseline:
        result.verdict = _("the baseline did not run to completion, so no setting can be judged")
        return
    winners = [r for r in records if r.beats_baseline and r.guard_ok is not False]
    if not winners:
        result.verdict = _("no setting beat the baseline beyond noise")
        return
    best = max(winners, key=lambda r: r.speedup or 0.0)
    result.winner = best.number
    result.best_changes = dict(best.changes)
    noise = (best.speedup_high - best.speedup_low) / 2
    result.verdict = _(
        "trial {number} is {speedup}x the baseline ({confidence} interval {low}-{high}, +/-{noise}); "
        "numerics: {numerics}"
    ).format(
        number=best.number,
        speedup=f"{best.speedup:.2f}",
        confidence="95%",
        low=f"{best.speedup_low:.2f}",
        high=f"{best.speedup_high:.2f}",
        noise=f"{noise:.2f}",
        numerics=knobs.numerics_label(best.numerics),
    )
    ties = [r.number for r in winners if r is not best and (r.speedup_high or 0) >= (best.speedup_low or 0)]
    if ties:
        result.verdict += _("; within its noise: trial(s) {trials}").format(trials=", ".join(map(str, ties)))
    result.snippet_python = snippet.python_lines(best.changes, result.device, result.batch_size)
    result.snippet_env = snippet.env_lines(best.changes)
    result.snippet_yaml = snippet.yaml_lines(best.changes)
