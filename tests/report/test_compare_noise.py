"""`gpuwise compare` with noise: each delta is an improvement, a regression, within noise, or has no
noise bound; --fail-on-regression exits 1 on a regression (3 when nothing can be judged); files with
no measurement in common exit 3. Constructed bench files, and a real pair: two recorded runs of this
project's 2-core CPU VM (tests/captures/cpu-vm-kvm-docker.bench-*.json)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuwise.cli import app
from gpuwise.errors import UserInputError
from gpuwise.report.compare import compare_files
from gpuwise.report.mannwhitney import mann_whitney_p

CAPTURES = Path(__file__).parents[1] / "captures"


def result(name: str, value: float, low: float | None, high: float | None, repeats: int | None, unit="GB/s",
           samples: list[float] | None = None) -> dict:  # fmt: skip
    stats = None if repeats is None else {"median": value, "min": low, "max": high, "repeats": repeats}
    if samples is not None:
        stats["samples"] = samples
    return {"name": name, "status": "ok", "value": value, "unit": unit, "device": "cpu", "stats": stats}


def bench_file(path: Path, *results: dict) -> Path:
    path.write_text(json.dumps({"schema": "gpuwise-bench/1", "hostname": "vm", "results": list(results)}))
    return path


@pytest.fixture
def pair(tmp_path):
    a = bench_file(
        tmp_path / "a.json",
        result("copy", 10.0, 9.5, 10.5, 5),
        result("triad", 10.0, 9.0, 11.0, 5),
        result("faster", 10.0, 9.8, 10.2, 5),
        result("latency", 5.0, 4.9, 5.1, 5, unit="us"),
        result("once", 10.0, 10.0, 10.0, 1),
        result("only_in_a", 1.0, 1.0, 1.0, 3),
    )
    b = bench_file(
        tmp_path / "b.json",
        result("copy", 8.0, 7.8, 8.2, 5),  # ranges apart, lower: a regression
        result("triad", 9.0, 8.5, 9.6, 5),  # 10% lower, but the ranges overlap: within noise
        result("faster", 12.0, 11.9, 12.1, 5),
        result("latency", 6.0, 5.9, 6.1, 5, unit="us"),  # a time that went up: a regression
        result("once", 5.0, 5.0, 5.0, 1),  # halved, but one repeat each: no noise bound
    )
    return a, b


def test_each_delta_is_marked(pair):
    c = compare_files(*pair)
    verdicts = {m.name: m.verdict for m in c.measurements}
    assert verdicts == {
        "copy": "regression",
        "triad": "within_noise",
        "faster": "improvement",
        "latency": "regression",
        "once": "no_noise_bound",
        "only_in_a": None,
    }
    assert c.verdicts == {"regression": 2, "within_noise": 1, "improvement": 1, "no_noise_bound": 1}
    assert next(m for m in c.measurements if m.name == "copy").a_range == (9.5, 10.5)


def test_fail_on_regression_exits_1_and_names_them(pair):
    r = CliRunner().invoke(app, ["compare", *map(str, pair), "--fail-on-regression"])
    assert r.exit_code == 1, r.output
    assert "2 measurement(s) regressed beyond the noise: copy, latency" in r.output
    assert "within noise" in r.output and "no noise bound" in r.output
    assert CliRunner().invoke(app, ["compare", *map(str, pair)]).exit_code == 0  # without the flag: 0


def test_no_regression_beyond_noise_exits_0(tmp_path):
    a = bench_file(tmp_path / "a.json", result("copy", 10.0, 9.0, 11.0, 5))
    b = bench_file(tmp_path / "b.json", result("copy", 9.0, 8.5, 9.5, 5))
    r = CliRunner().invoke(app, ["compare", str(a), str(b), "--fail-on-regression"])
    assert r.exit_code == 0, r.output
    assert "0 regression(s), 0 improvement(s), 1 within noise" in " ".join(r.output.split())


def test_single_repeats_say_there_is_no_noise_bound(tmp_path):
    a = bench_file(tmp_path / "a.json", result("fio", 1.0, 1.0, 1.0, 1), result("x", 2.0, None, None, None))
    b = bench_file(tmp_path / "b.json", result("fio", 0.5, 0.5, 0.5, 1), result("x", 1.0, None, None, None))
    r = CliRunner().invoke(app, ["compare", str(a), str(b)])
    assert r.exit_code == 0 and "no noise bound: neither run repeated" in " ".join(r.output.split())
    r = CliRunner().invoke(app, ["compare", str(a), str(b), "--fail-on-regression"])
    assert isinstance(r.exception, UserInputError) and "none can be judged" in str(r.exception)


def test_nothing_in_common_exits_3(tmp_path):
    a = bench_file(tmp_path / "a.json", result("copy", 10.0, 9.0, 11.0, 5))
    b = bench_file(tmp_path / "b.json", result("triad", 9.0, 8.5, 9.5, 5))
    r = subprocess.run(
        [sys.executable, "-m", "gpuwise.cli", "compare", str(a), str(b)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 3, (r.stdout, r.stderr)
    assert "no measurement in common" in r.stderr and "To fix:" in r.stderr and "Traceback" not in r.stderr


def test_samples_decide_with_a_mann_whitney_test(tmp_path):
    assert mann_whitney_p([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]) == pytest.approx(2 / 252)  # exact: 2 of C(10,5)
    assert mann_whitney_p([1, 3, 5, 7, 9], [2, 4, 6, 8, 10]) > 0.5
    # the ranges overlap (A 9.8-10.3, B 9.5-9.85), which alone would say within noise; with 6 samples
    # each, the rank test decides: every B sample but one is below every A sample
    a_samples, b_samples = [10.0, 10.2, 9.9, 10.1, 10.3, 9.8], [9.85, 9.6, 9.75, 9.5, 9.65, 9.55]
    a = bench_file(tmp_path / "a.json", result("copy", 10.05, 9.8, 10.3, 6, samples=a_samples))
    b = bench_file(tmp_path / "b.json", result("copy", 9.63, 9.5, 9.85, 6, samples=b_samples))
    (m,) = compare_files(a, b).measurements
    assert m.verdict == "regression" and m.p_value < 0.05


def test_a_real_pair_of_this_vm(tmp_path):
    """Two runs of the 2-core VM a day apart: the collectives they share swing 0.32x-1.53x; only
    allgather's repeats ranges are apart (A 0.343-0.446 GB/s, B 0.047-0.077 GB/s)."""
    a, b = (
        CAPTURES / "cpu-vm-kvm-docker.bench-collective.json",
        CAPTURES / "cpu-vm-kvm-docker.bench-quick.json",
    )
    verdicts = {m.name: m.verdict for m in compare_files(a, b).in_common}
    assert verdicts == {
        "allgather_busbw": "regression",
        "allreduce_busbw": "within_noise",
        "broadcast_busbw": "within_noise",
        "reducescatter_busbw": "within_noise",
    }
    r = CliRunner().invoke(app, ["compare", str(a), str(b), "--fail-on-regression"])
    assert r.exit_code == 1 and "allgather_busbw" in r.output
    r = CliRunner().invoke(app, ["compare", str(a), str(b), "--format", "json"])
    assert json.loads(r.output)["verdicts"] == {"regression": 1, "within_noise": 3}


def test_damaged_stats_give_no_noise_bound_not_a_traceback(tmp_path):
    bad = [
        {"min": "9", "max": 11.0, "repeats": 5},
        {"min": 11.0, "max": 9.0, "repeats": 5},  # inverted
        {"min": 9.0, "max": 11.0, "repeats": True},
        {"min": 9.0, "max": 11.0, "repeats": 5, "samples": ["x", None, False]},
        "not an object",
    ]
    a_results = [{**result(f"m{i}", 10.0, 9.0, 11.0, 5), "stats": s} for i, s in enumerate(bad)]
    b_results = [result(f"m{i}", 5.0, 4.0, 6.0, 5) for i in range(len(bad))]
    a = bench_file(tmp_path / "a.json", *a_results)
    b = bench_file(tmp_path / "b.json", *b_results)
    verdicts = [m.verdict for m in compare_files(a, b).measurements]
    # samples that are not numbers are dropped; the ranges [9, 11] vs [4, 6] still decide that one
    assert verdicts == ["no_noise_bound"] * 3 + ["regression", "no_noise_bound"]


def test_hand_written_rows_are_read_as_before(tmp_path):
    """compare reads rows the bench writer's strict model refuses: no layer, fields of its own, a name
    that is a number; a report whose measurements are such rows, and findings with only an id."""
    row = {
        "name": 7,
        "value": 2.0,
        "unit": None,
        "note": "by hand",
        "stats": {"min": 1.9, "max": 2.1, "repeats": 3},
    }
    a = bench_file(tmp_path / "a.json", row)
    report = {"schema": "gpuwise-report/1", "host": "n1", "findings": [{"id": "x.y"}, {"id": "x.z", "status": "pass"}],
              "measurements": {"results": [{**row, "value": 4.0, "stats": {"min": 3.9, "max": 4.1, "repeats": 3}}]}}  # fmt: skip
    b = tmp_path / "b.json"
    b.write_text(json.dumps(report))
    c = compare_files(a, b)
    (m,) = c.measurements
    assert (m.name, m.unit, m.ratio, m.verdict) == ("7", "", 2.0, "improvement")
    assert (c.host_a, c.host_b, c.kind_b) == ("vm", "n1", "report")
    assert compare_files(b, b).findings == []  # the same findings on both sides: no difference


def test_a_hand_edited_stability_run_is_read_as_before(tmp_path):
    """A metric with no info, or a summary that is not an object, reads as empty: rows named "?"."""
    doc = {
        "schema": "gpuwise-stability/1",
        "host": "n1",
        "results": [{"summary": {"median": 2.0}}, {"info": {"name": "x"}, "summary": 5}],
    }
    a = tmp_path / "a.json"
    a.write_text(json.dumps(doc))
    c = compare_files(a, a)
    assert (c.kind_a, c.host_a) == ("stability", "n1")
    assert {m.name: m.ratio for m in c.measurements} == {
        "? median": 1.0,
        "? p99": None,
        "? cv": None,
        "x median": None,
        "x p99": None,
        "x cv": None,
    }
