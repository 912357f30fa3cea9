"""Traffic input: the three daily shapes, weekly factors, and bad CSVs refused with their line."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest

from gpuwise.errors import DataValidationError
from gpuwise.plan.serving.traffic import demand_week
from gpuwise.plan.serving.workload import Traffic, load_inference_workload

START = dt.datetime(2026, 11, 2)  # a Monday


def _csv(tmp_path: Path, rates: list, stamps: list | None = None) -> Path:
    stamps = stamps or [(START + dt.timedelta(hours=i)).isoformat() for i in range(len(rates))]
    lines = ["timestamp,rps"] + [f"{s},{r}" for s, r in zip(stamps, rates, strict=True)]
    path = tmp_path / "rates.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_peak_valley_profile_with_weekly_factors():
    t = Traffic(peak_rps=50, valley_rps=10, peak_hours=(8, 20), weekly=[1, 1, 1, 1, 1, 0.5, 0.5])
    week = demand_week(t, Path("."))
    assert week.rps.shape == (168,)
    assert week.rps[8] == 50 and week.rps[7] == 10 and week.rps[20] == 10
    assert week.rps[5 * 24 + 9] == 25  # Saturday peak
    assert week.peak == 50 and week.valley == 5 and week.peak_to_valley == 10


def test_scaled_shape_keeps_the_mean_and_sets_the_ratio():
    week = demand_week(Traffic(peak_rps=50, valley_rps=10, peak_hours=(8, 20)), Path("."))
    flat = week.scaled_shape(2.0)
    assert flat.mean == pytest.approx(week.mean)
    assert flat.peak_to_valley == pytest.approx(2.0)


def test_csv_of_a_day_gives_the_hourly_profile(tmp_path):
    rates = [float(h) + 1 for h in range(24)]
    week = demand_week(Traffic(csv=str(_csv(tmp_path, rates))), tmp_path)
    assert np.allclose(week.daily_profile(), rates)


def test_csv_of_a_week_gives_hour_of_week_means(tmp_path):
    rates = [1.0] * 168
    rates[24 * 6 + 12] = 9.0  # Sunday noon
    week = demand_week(Traffic(csv=str(_csv(tmp_path, rates))), tmp_path)
    assert week.rps[24 * 6 + 12] == 9.0 and week.rps[12] == 1.0


@pytest.mark.parametrize(
    ("rates", "stamps", "line", "words"),
    [
        (["1"] * 5 + ["-3"] + ["1"] * 20, None, 7, "negative rate"),
        (["1"] * 3 + ["lots"] + ["1"] * 22, None, 5, "not a number"),
        (["1"] * 3 + [""] + ["1"] * 22, None, 5, "empty"),
        (
            ["1"] * 26,
            [(START + dt.timedelta(hours=i + (3 if i >= 10 else 0))).isoformat() for i in range(26)],
            12,
            "gap: 3 hour(s) missing",
        ),  # fmt: skip
        (
            ["1"] * 26,
            [(START + dt.timedelta(hours=i if i != 5 else 4)).isoformat() for i in range(26)],
            7,
            "not after the previous row",
        ),  # fmt: skip
        (
            ["1"] * 26,
            ["yesterday"] + [(START + dt.timedelta(hours=i)).isoformat() for i in range(1, 26)],
            2,
            "not an ISO-8601 time",
        ),  # fmt: skip
    ],
)
def test_bad_csv_is_refused_with_its_line(tmp_path, rates, stamps, line, words):
    path = _csv(tmp_path, rates, stamps)
    with pytest.raises(DataValidationError) as err:
        demand_week(Traffic(csv=str(path)), tmp_path)
    assert err.value.line == line and words in str(err.value) and "To fix:" in str(err.value)


def test_too_short_and_all_zero_csvs_are_refused(tmp_path):
    with pytest.raises(DataValidationError, match="at least 24"):
        demand_week(Traffic(csv=str(_csv(tmp_path, [1.0] * 10))), tmp_path)
    with pytest.raises(DataValidationError, match="no requests"):
        demand_week(Traffic(csv=str(_csv(tmp_path, [0.0] * 30))), tmp_path)


def test_missing_csv_names_the_file(tmp_path):
    with pytest.raises(DataValidationError, match="not found"):
        demand_week(Traffic(csv="nope.csv"), tmp_path)


BASE = """kind: inference
model:
  params: 8e9
  layers: 32
  hidden: 4096
  heads: 32
  prompt_tokens: 100
  output_tokens: 100
traffic:
{traffic}
service:
  ttft_p95_ms: 500
  tpot_p95_ms: 50
"""


@pytest.mark.parametrize(
    ("traffic", "line", "words"),
    [
        ("  hourly_rps: [1, 2, 3]", 10, "24 values"),
        ("  peak_rps: 5\n  valley_rps: 9\n  peak_hours: [8, 20]", 9, "valley_rps is above peak_rps"),
        ("  peak_rps: 5\n  csv: x.csv", 9, "exactly one traffic shape"),
        ("  csv: x.csv\n  wekly: [1, 1, 1, 1, 1, 1, 1]", 11, "did you mean 'weekly'"),
    ],
)
def test_workload_errors_name_file_and_line(tmp_path, traffic, line, words):
    path = tmp_path / "w.yaml"
    path.write_text(BASE.format(traffic=traffic))
    with pytest.raises(DataValidationError) as err:
        load_inference_workload(path)
    assert err.value.line == line, str(err.value)
    assert words in str(err.value) and str(path) in str(err.value)
