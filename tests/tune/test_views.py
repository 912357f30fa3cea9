"""The tune and profile views render in every format, and JSON carries the schema."""

from __future__ import annotations

import json

import pytest

from gpuwise.profile.model import Phase, ProfileFinding, ProfileResult
from gpuwise.report.formats import format_names, get_renderer
from gpuwise.report.views import profile as profile_view
from gpuwise.report.views import tune as tune_view
from gpuwise.tune.model import SkippedKnob, TrialRecord, TuneResult


def _tune_result() -> TuneResult:
    ok = dict(status="ok", samples_per_s=100.0, samples_per_s_low=90.0, samples_per_s_high=110.0, speedup=1.0)
    ok |= dict(speedup_low=0.9, speedup_high=1.1, peak_memory_bytes=300 << 20, memory_kind="peak RSS")
    return TuneResult(
        workload="mlp-slow-data",
        device="cpu",
        batch_size=32,
        warmup_steps=3,
        timed_steps=10,
        study="s",
        storage="/tmp/x.sqlite3",
        keep_numerics=False,
        trials=[
            TrialRecord(number=0, role="baseline", **ok),
            TrialRecord(
                number=1,
                role="probe",
                changes={"num_workers": 4},
                beats_baseline=True,
                **{**ok, "speedup": 3.0},
            ),
            TrialRecord(
                number=2,
                role="search",
                changes={"compile": "default"},
                status="failed",
                failure="compile",
                reason="x " * 80,
            ),
        ],
        skipped=[SkippedKnob(knob="precision", value="fp16", reason="no GPU")],
        winner=1,
        verdict="trial 1 is 3.00x the baseline",
        best_changes={"num_workers": 4},
        snippet_python=["loader = DataLoader(dataset, num_workers=4)"],
        snippet_yaml=["gpuwise_tune:", "  num_workers: 4"],
        sources={"num_workers": "https://pytorch.org/docs/stable/data.html"},
    )


def _profile_result() -> ProfileResult:
    return ProfileResult(
        workload="gpt-small",
        device="cpu",
        batch_size=8,
        wait_steps=1,
        warmup_steps=2,
        active_steps=5,
        trace_path="/tmp/t.json",
        step_ms=100.0,
        samples_per_s=80.0,
        phases=[
            Phase(name="data", ms_per_step=60.0, fraction=0.6),
            Phase(name="other", ms_per_step=40, fraction=0.4),
        ],
        findings=[
            ProfileFinding(
                id="data-loader-bound",
                severity="warning",
                title="t",
                evidence="e",
                recommendation="r",
                source="https://x",
            )
        ],
    )


@pytest.mark.parametrize("fmt", format_names())
def test_views_render_in_every_format(fmt):
    for doc in (tune_view.view(_tune_result()), profile_view.view(_profile_result())):
        out = get_renderer(fmt)(doc, width=80, color=False)
        assert out
        if fmt == "json":
            assert json.loads(out)["schema"] in ("gpuwise-tune/1", "gpuwise-profile/1")


def test_text_keeps_80_columns_and_names_the_winner():
    text = get_renderer("text")(tune_view.view(_tune_result()), width=80, color=False)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "1*" in text and "failed (compile)" in text and "num_workers=4" in text
