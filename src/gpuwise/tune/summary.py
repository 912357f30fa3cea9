"""From the stored study to a TuneResult: every trial with its status, throughput intervals, speedups, the
numerics guard, the winner reduced to its smallest winning change, and per knob why it won or not.

Every trial number appears: measured trials (ok, failed, pruned, or unreliable when an interval is wider
than its value), repeats of a measured setting and queued trials the budget did not reach (skipped, with
why), the reduction's trials and the closing baseline.
"""

from __future__ import annotations

from gpuwise.i18n import N_, joined, msg
from gpuwise.tune import knobs, snippet, stats
from gpuwise.tune.model import Contribution, KnobVerdict, SkippedKnob, TrialRecord, TuneResult
from gpuwise.tune.policy import category_order
from gpuwise.tune.search import DATA_HELD, TuneOptions

UNRELIABLE = N_("its interval (+/-) is larger than the value itself: too noisy to judge (not a result)")


def unreliable(tp: stats.Throughput) -> bool:
    """The interval reaches further from the value than the value itself (`245.0 +/-4,482`): one step far
    from the others. Only the half-width counts: a loader's clumped batches stretch the upper end of a
    clear win, which a rule on the full width would reject (see stats)."""
    return (tp.high - tp.low) / 2 > tp.samples_per_s


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
        dropped=a.get("dropped"),
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
    noisy = unreliable(tp)
    if base_s:
        sp = stats.speedup(seconds, base_s, seed=t.number)
        rec.speedup, rec.speedup_low, rec.speedup_high = sp.value, sp.low, sp.high
        rec.beats_baseline = (
            not noisy and rec.role not in ("baseline", "baseline-end") and stats.beats_baseline(sp, drift)
        )
    if noisy:
        rec.status, rec.reason = "unreliable", msg(UNRELIABLE)
    if base_losses and a.get("losses"):
        guard = stats.numerics_guard(a["losses"], base_losses, effect, opts.guard_steps)
        rec.guard_max_rel_diff, rec.guard_tolerance, rec.guard_ok = (
            guard.max_rel_diff,
            guard.tolerance,
            guard.ok,
        )
    return rec


def reworded(reason: str | None, stored: list | None) -> str | None:
    """A reason the study keeps in English, as a message again (trial.because stored it as [msgid, args])."""
    if not stored:
        return reason  # quoted (an exception's text) or stored before reasons kept their message
    msgid, args = stored
    return msg(msgid, **args)


class _Stored:
    """A trial kept as a study attribute (reduction, closing baseline), shaped like a FrozenTrial."""

    def __init__(self, attrs: dict):
        self.number, self.params, self.user_attrs = attrs["number"], attrs["params"], attrs


def _unrun(t, space: dict) -> TrialRecord | None:
    """A trial number that measured nothing: a repeat, an interrupted trial, a queued one not reached."""
    import optuna

    a = t.user_attrs
    params = dict(t.params) or dict(a.get("queued_params") or {})
    base = {"number": t.number, "changes": _changes(params, space), "numerics": knobs.numerics_of(params)}
    if a.get("role") == "repeat":
        why = msg("the same setting as trial {number}: not run again").format(number=a.get("repeat_of"))
        return TrialRecord(role="repeat", status="skipped", reason=why, **base)
    role = a.get("role") or a.get("queued_role") or "search"
    if t.state == optuna.trial.TrialState.FAIL:
        why = msg("interrupted; run again under a new number")
        return TrialRecord(
            role=role, status="failed", failure=a.get("failure", "interrupted"), reason=why, **base
        )
    if t.state == optuna.trial.TrialState.WAITING:
        why = msg("queued, not run: the search ended first (--trials, or every nearby setting measured)")
        return TrialRecord(role=role, status="skipped", reason=why, **base)
    return None


def _all_trials(study) -> tuple[list, list]:
    """(trials that measured something, trial numbers that did not) over the whole study."""
    import optuna

    measured, unrun = [], []
    for t in study.get_trials(deepcopy=False):
        done = t.state in (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
        (measured if done and t.user_attrs.get("role") != "repeat" else unrun).append(t)
    reduction = study.user_attrs.get("reduction") or {}
    measured += [_Stored(step) for step in reduction.get("steps", [])]
    if "baseline_end" in study.user_attrs:
        measured.append(_Stored(study.user_attrs["baseline_end"]))
    return measured, unrun


def summarize(
    study, opts: TuneOptions, space: dict, skipped: list, tokens_per_sample: int | None
) -> TuneResult:
    trials, unrun = _all_trials(study)
    by_role = {t.user_attrs.get("role"): t for t in trials if t.user_attrs.get("status") == "ok"}
    first, last = by_role.get("baseline"), by_role.get("baseline-end")
    base_s = (first.user_attrs["seconds"] if first else []) + (last.user_attrs["seconds"] if last else [])
    drift = stats.drift(first.user_attrs["seconds"], last.user_attrs["seconds"]) if first and last else 0.0
    base_losses = first.user_attrs.get("losses", []) if first else []
    records = [_record(t, space, opts, base_s, base_losses, drift) for t in trials]
    records += [r for r in (_unrun(t, space) for t in unrun) if r is not None]
    records.sort(key=lambda r: r.number)
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
    result.held = _held(study, space, records)
    _choose(study, result, records, bool(base_s), drift)
    result.knobs = knob_verdicts(result, space)
    return result


def _held(study, space: dict, records: list[TrialRecord]) -> str | None:
    """Why compute-side knobs waited (the baseline was data-bound), or None when nothing waited."""
    if not study.user_attrs.get("held"):
        return None
    base = next((r for r in records if r.role == "baseline" and r.data_wait_fraction is not None), None)
    share = f"{base.data_wait_fraction:.0%}" if base else "?"
    released = study.user_attrs.get("held_released")
    if released is not None:
        return msg(
            "the baseline waited {share} of its step on data; {categories} were probed once trial "
            "{number} brought the wait under {limit}"
        ).format(share=share, categories=joined(", ", DATA_HELD), number=released, limit="5%")
    best = min((r.data_wait_fraction for r in records if r.data_wait_fraction is not None), default=None)
    return msg(
        "the baseline waited {share} of its step on data and no trial brought it under {limit} (the "
        "least: {least}), so {categories} were not tried: they can gain only the compute share of a step"
    ).format(
        share=share,
        limit="5%",
        least=f"{best:.0%}" if best is not None else "?",
        categories=joined(", ", DATA_HELD),
    )


def _data_prior(records: list[TrialRecord]) -> str | None:
    from gpuwise.tune.search import DATA_BOUND_FRACTION

    base = next((r for r in records if r.role == "baseline" and r.data_wait_fraction is not None), None)
    return "data" if base and base.data_wait_fraction > DATA_BOUND_FRACTION else None


def _clears(r: TrialRecord, drift: float) -> bool:
    """Too noisy to quote (unreliable), yet its speedup interval's lower end clears the noise."""
    low = r.speedup_low if r.status == "unreliable" and r.guard_ok is not False else None
    return low is not None and low - 1.0 > stats.required_gain(None, drift)


def _winner(study, records: list[TrialRecord], reduction: dict | None, drift: float) -> tuple:
    """(the recommended trial or None, the contributions of its changes, the trial it was reduced from)."""
    from gpuwise.tune.reduce import decide

    by_number = {r.number: r for r in records}
    candidates = [r for r in records if r.beats_baseline and r.guard_ok is not False]
    if reduction is None:  # a study from before reductions: the fastest setting that beat the baseline
        return (max(candidates, key=lambda r: r.speedup or 0.0) if candidates else None), [], None
    origin = by_number.get(reduction.get("from"))
    if origin is None:
        return None, [], None
    steps = reduction.get("steps", [])
    if not steps:  # one change: what it is worth is its speedup over the baseline
        only = [
            Contribution(
                knob=k,
                value=v,
                kept=True,
                why="only-change",
                trial=origin.number,
                speedup=origin.speedup,
                speedup_low=origin.speedup_low,
                speedup_high=origin.speedup_high,
            )  # fmt: skip
            for k, v in origin.changes.items()
        ]
        return (origin if origin in candidates or _clears(origin, drift) else None), only, None
    searched = {**study.get_trials(deepcopy=False)[origin.number].user_attrs, "number": origin.number}
    ref = steps[0] if steps[0].get("status") == "ok" and steps[0].get("seconds") else searched
    contributions = []
    for attrs in steps[1:]:
        if attrs.get("dropped") is None:
            continue  # the setting left, measured once more
        verdict = decide(attrs, ref)
        contributions.append(
            Contribution(
                knob=attrs["dropped"],
                value=origin.changes.get(attrs["dropped"]),
                kept=verdict["kept"],
                why=verdict["why"],
                trial=attrs["number"],
                speedup=verdict.get("speedup"),
                speedup_low=verdict.get("low"),
                speedup_high=verdict.get("high"),
            )  # fmt: skip
        )
        if not verdict["kept"]:
            ref = attrs
    left = by_number[ref["number"]].changes if ref["number"] in by_number else None
    # the setting left, by its clean measurement that beat the baseline (the latest: its own reduction
    # trial, or the measurement again, or the search's); none when every one was too noisy or slower
    same = [r for r in candidates if left and r.changes == left]
    if not same and left and any(c.kept for c in contributions):  # each change beat the noise, but its
        # throughput is too noisy to quote: recommended on the removals' evidence, flagged unreliable
        same = [r for r in records if r.changes == left and r.status == "unreliable"]
    return (same[-1] if same else None), contributions, origin.number


def _choose(study, result: TuneResult, records: list[TrialRecord], have_baseline: bool, drift: float) -> None:
    if not have_baseline:
        result.verdict = msg("the baseline did not run to completion, so no setting can be judged")
        return
    best, contributions, origin = _winner(study, records, study.user_attrs.get("reduction"), drift)
    result.contributions, result.reduced_from = contributions, origin
    if best is None or not best.changes:
        result.verdict = msg("no setting beat the baseline beyond noise")
        if origin is not None:
            result.verdict = msg(
                "trial {number} beat the baseline in the search, but measured again with its changes "
                "reduced it did not beat it beyond the noise: nothing is recommended"
            ).format(number=origin)
        return
    result.winner = best.number
    result.best_changes = dict(best.changes)
    noise = (best.speedup_high - best.speedup_low) / 2
    if best.status == "unreliable":
        result.verdict = msg(
            "recommended: {changes}: removing each of them cost more than the noise (see what each "
            "change is worth), but trial {number}'s own throughput is too noisy to quote a speedup"
        ).format(changes=joined(", ", (f"{k}={v}" for k, v in best.changes.items())), number=best.number)
    else:
        result.verdict = msg(
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
    if origin is not None:
        dropped = [c.knob for c in contributions if not c.kept]
        result.verdict += msg(
            "; reduced from trial {origin}: kept only the changes whose removal cost more than the noise"
        ).format(origin=origin)
        if dropped:
            result.verdict += msg(" (dropped: {dropped})").format(dropped=joined(", ", dropped))
    result.snippet_python = snippet.python_lines(best.changes, result.device, result.batch_size)
    result.snippet_env = snippet.env_lines(best.changes)
    result.snippet_yaml = snippet.yaml_lines(best.changes)


def knob_verdicts(result: TuneResult, space: dict) -> list[KnobVerdict]:
    """Per knob: skipped here (why), waited for data loading, failed, within noise, or a measured gain."""
    out: list[KnobVerdict] = []
    seen: set[str] = set()
    for s in result.skipped:
        if s.knob not in space and s.knob not in seen:
            seen.add(s.knob)
            out.append(KnobVerdict(knob=s.knob, outcome="skipped", detail=s.reason))
    kept = {c.knob for c in result.contributions if c.kept} | set(result.best_changes)
    for name in space:
        tried = [r for r in result.trials if name in r.changes and r.role not in ("repeat",)]
        ran = [r for r in tried if r.status in ("ok", "unreliable")]
        if name in kept:
            out.append(KnobVerdict(knob=name, outcome="gain", detail=msg("in the recommended setting")))
        elif not tried or all(r.status == "skipped" for r in tried):
            held = result.held if result.held and knobs.by_name()[name].category in DATA_HELD else None
            outcome = "held" if held else "not-tried"
            out.append(
                KnobVerdict(knob=name, outcome=outcome, detail=held or msg("the search did not reach it"))
            )
        elif not ran:
            first = next(r for r in tried if r.status in ("failed", "pruned"))
            out.append(KnobVerdict(knob=name, outcome=first.status, detail=first.reason or ""))
        else:
            alone = [r for r in ran if len(r.changes) == 1] or ran
            best = max(alone, key=lambda r: r.speedup or 0.0)
            if best.status == "unreliable":
                out.append(KnobVerdict(knob=name, outcome="unreliable", detail=msg(UNRELIABLE)))
                continue
            detail = msg("best: trial {number}, {speedup}x [{low}-{high}]").format(
                number=best.number,
                speedup=f"{best.speedup:.2f}" if best.speedup else "?",
                low=f"{best.speedup_low:.2f}" if best.speedup_low else "?",
                high=f"{best.speedup_high:.2f}" if best.speedup_high else "?",
            )
            dropped = next((c for c in result.contributions if c.knob == name and not c.kept), None)
            if dropped is not None and dropped.speedup is not None:
                detail += msg("; removing it from trial {origin} cost {speedup}x [{low}-{high}]").format(
                    origin=result.reduced_from,
                    speedup=f"{dropped.speedup:.2f}",
                    low=f"{dropped.speedup_low:.2f}",
                    high=f"{dropped.speedup_high:.2f}",
                )
            out.append(KnobVerdict(knob=name, outcome="within-noise", detail=detail))
    return out
