"""The SQLite run history: migrations, WAL, concurrent writers, broken files, regressions, the CLI."""

from __future__ import annotations

import copy
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gpuwise.commands.history import record_run
from gpuwise.errors import UserInputError
from gpuwise.store import records
from gpuwise.store.history import MIGRATIONS, History, HistoryError, mask_host
from gpuwise.store.regress import check, find_regressions

BENCH = Path(__file__).parents[1] / "captures" / "h200-1gpu-kvm-vm.bench-quick.json"


def bench_doc() -> dict:
    return json.loads(BENCH.read_text())


def scaled(doc: dict, factor: float, created_at: str, **env) -> dict:
    """The same run with every measured value (median, min, max) times `factor`."""
    out = copy.deepcopy(doc)
    out["created_at"] = created_at
    out["environment"].update(env)
    for result in out["results"]:
        if result.get("value") is not None:
            result["value"] *= factor
        for key in ("median", "min", "max"):
            if (result.get("stats") or {}).get(key) is not None:
                result["stats"][key] *= factor
    return out


PAST = ((1.0, None), (1.01, "2026-11-29T22:00:00+00:00"), (0.99, "2026-11-29T23:00:00+00:00"))


def past_docs() -> list[dict]:
    """Three past runs of the recorded H200 bench, 1% apart (the minimum a regression is judged on)."""
    return [bench_doc() if when is None else scaled(bench_doc(), f, when) for f, when in PAST]


def test_schema_is_migrated_and_in_wal_mode(tmp_path):
    db_path = tmp_path / "gwhist" / "history.db"
    with History(db_path) as db:
        assert db.schema_version() == MIGRATIONS[-1][0]
    with sqlite3.connect(db_path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with History(db_path) as db:  # reopening an up-to-date database changes nothing
        assert db.schema_version() == MIGRATIONS[-1][0]


def test_bench_run_round_trips_with_masked_host(tmp_path):
    doc = bench_doc()
    record_run("bench", doc, tmp_path / "h.db")
    with History(tmp_path / "h.db") as db:
        (run,) = db.runs()
        assert run.host == mask_host("vm") and "vm" not in run.host
        full = db.get(run.id)
    assert full.document == doc
    names = {m.name: m for m in full.metrics}
    assert names["matmul_bf16"].value == pytest.approx(678.6096931546447)
    assert names["matmul_bf16"].low == pytest.approx(560.9355453432266)
    assert "storage" not in names  # failed benchmarks are not metrics
    assert full.facts["torch"] == "2.11.0+cu130" and "clocks_at_start" not in full.facts


WRITER = """
import sys
from gpuwise.store.history import History, Metric
with History(sys.argv[1]) as db:
    for i in range(25):
        db.record("bench", sys.argv[2], f"2026-11-30T10:00:{i:02d}+00:00", {"w": sys.argv[2]},
                  [Metric("matmul_bf16", 600.0 + i, "TFLOP/s", 590.0, 610.0, 10)], {"i": i})
"""


def test_two_concurrent_writer_processes_both_land(tmp_path):
    path = tmp_path / "h.db"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), f"host-w{n}"]) for n in (1, 2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    with History(path) as db:
        runs = db.runs(limit=1000)
    assert len(runs) == 50
    assert {r.host for r in runs} == {"host-w1", "host-w2"}
    assert all(len(r.metrics) == 1 for r in runs)


@pytest.fixture
def truncated_db(tmp_path) -> Path:
    path = tmp_path / "h.db"
    record_run("bench", bench_doc(), path)
    data = path.read_bytes()
    assert len(data) > 8192
    path.write_bytes(data[:1000])  # cut inside the first page, as a full disk or a killed copy leaves it
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    return path


def test_truncated_database_is_a_clear_error(truncated_db):
    with pytest.raises(HistoryError) as err, History(truncated_db) as db:
        db.runs()
    text = str(err.value)
    assert str(truncated_db) in text and "To fix: move it aside" in text


def test_truncated_database_does_not_stop_the_run(truncated_db, capsys):
    record_run("bench", bench_doc(), truncated_db)  # must not raise
    err = capsys.readouterr().err
    assert "not recorded in the history" in err and "To fix:" in err


def test_cli_on_truncated_database_exits_3_with_the_fix(truncated_db):
    r = subprocess.run(
        [sys.executable, "-m", "gpuwise.cli", "history", "list", "--history", str(truncated_db)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 3, r.stderr
    assert "To fix:" in r.stderr and "Traceback" not in r.stderr


def _past(tmp_path, *docs) -> list:
    with History(tmp_path / "h.db") as db:
        for doc in docs:
            db.record(
                "bench",
                "host-x",
                doc["created_at"],
                records.facts_of("bench", doc),
                records.metrics_of("bench", doc),
                doc,
            )
        return db.runs(kind="bench", host="host-x")


def test_a_15_percent_drop_is_a_regression_naming_the_changed_facts(tmp_path):
    before = bench_doc()
    past = _past(tmp_path, *past_docs())
    after = scaled(before, 0.85, "2026-11-30T09:00:00+00:00", torch="2.12.0+cu130")
    found = {
        r.metric: r
        for r in find_regressions(records.metrics_of("bench", after), records.facts_of("bench", after), past)
    }
    ok_metrics = {m.name for m in records.metrics_of("bench", before)}
    assert "matmul_bf16" in found and found["matmul_bf16"].change == pytest.approx(-0.15)
    # metrics whose own repeats spread more than 15% (host_copy, the pinned data loader) are within noise
    assert len(found) >= len(ok_metrics) - 4
    assert "dataloader_samples_per_s_pinned" not in found
    sentence = found["matmul_bf16"].sentence()
    assert (
        "matmul_bf16 down 15.0% since 2026-11-29" in sentence
        and "median of 3 past runs, noise bound ±30 = 3 × 1.4826 × MAD" in sentence
        and "torch 2.11.0+cu130 → 2.12.0+cu130" in sentence
    )


def test_fewer_than_three_past_runs_are_not_enough_history(tmp_path):
    """The old rule flagged 'down 15% ... median of 1 past run(s)' from a single earlier run."""
    after = scaled(bench_doc(), 0.85, "2026-11-30T09:00:00+00:00")
    for n in (1, 2):
        past = _past(tmp_path / str(n), *past_docs()[:n])
        found = check(records.metrics_of("bench", after), records.facts_of("bench", after), past)
        assert found.regressions == []
        assert found.not_enough_history().startswith(f"not enough history ({n} of 3 runs)")


def test_the_noise_bound_is_three_scaled_mads_of_the_past_runs(tmp_path):
    """Past runs 10% apart: MAD = 10%, bound = 3 x 1.4826 x 10% = 44%: a 15% drop is within noise,
    a 50% drop is not."""
    docs = [bench_doc(), scaled(bench_doc(), 1.1, "2026-11-29T22:00:00+00:00"),
            scaled(bench_doc(), 0.9, "2026-11-29T23:00:00+00:00")]  # fmt: skip
    past = _past(tmp_path, *docs)
    for factor, flagged in ((0.85, False), (0.5, True)):
        after = scaled(bench_doc(), factor, "2026-11-30T09:00:00+00:00")
        names = {r.metric for r in find_regressions(records.metrics_of("bench", after), {}, past)}
        assert ("matmul_bf16" in names) is flagged, factor


def test_runs_within_noise_are_not_regressions(tmp_path):
    before = bench_doc()
    past = _past(tmp_path, *past_docs(), scaled(before, 1.02, "2026-11-29T23:30:00+00:00"))
    after = scaled(before, 0.99, "2026-11-30T09:00:00+00:00")
    assert find_regressions(records.metrics_of("bench", after), records.facts_of("bench", after), past) == []


def test_latency_regression_is_an_increase(tmp_path):
    from gpuwise.store.history import Metric, Run

    past = [
        Run(i, "bench", f"2026-11-0{i}", "h", "d", {}, [Metric("p2p_latency", v, "us", v - 0.1, v + 0.1, 10)])
        for i, v in ((3, 10.0), (2, 10.1), (1, 9.9))
    ]
    assert find_regressions([Metric("p2p_latency", 12.0, "us", 11.9, 12.1, 10)], {}, past)
    assert not find_regressions([Metric("p2p_latency", 8.0, "us", 7.9, 8.1, 10)], {}, past)


def test_history_trend_after_four_bench_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("socket.gethostname", lambda: "vm")  # the recorded run's host is this host
    path = tmp_path / "h.db"
    record_run("bench", bench_doc(), path)
    assert "not enough history (0 of 3 runs)" in capsys.readouterr().err
    for doc in past_docs()[1:]:
        record_run("bench", doc, path)
    record_run("bench", scaled(bench_doc(), 0.85, "2026-11-30T09:00:00+00:00"), path)
    assert "regression: matmul_bf16 down 15.0%" in capsys.readouterr().err
    from typer.testing import CliRunner

    from gpuwise.cli import app

    r = CliRunner().invoke(app, ["history", "trend", "matmul_bf16", "--history", str(path), "--host", "vm"])
    assert r.exit_code == 0, r.output
    assert "678.6" in r.output and "576.8" in r.output
    r = CliRunner().invoke(
        app, ["history", "trend", "matmul_bf16", "--history", str(path), "--format", "json"]
    )
    assert [p["value"] for p in json.loads(r.output)["points"]] == pytest.approx(
        [678.6097, 685.3958, 671.8236, 576.8182], rel=1e-4
    )
    r = CliRunner().invoke(app, ["history", "trend", "matmul_bf1", "--history", str(path)])
    assert isinstance(r.exception, UserInputError)  # cli.main maps it to exit 3 (see the truncated-DB test)
    assert "did you mean 'matmul_bf16'" in str(r.exception)
    r = CliRunner().invoke(app, ["history", "list", "--history", str(path)])
    assert r.exit_code == 0 and mask_host("vm") in r.output
    r = CliRunner().invoke(app, ["history", "show", "4", "--history", str(path), "--format", "md"])
    assert r.exit_code == 0 and "| matmul_bf16 |" in r.output


def test_no_history_records_nothing(tmp_path):
    record_run("bench", bench_doc(), tmp_path / "h.db", skip=True)
    assert not (tmp_path / "h.db").exists()


def test_an_older_files_headline_outside_its_own_samples_is_not_recorded():
    """A bench file of an older gpuwise (tests/captures/cpu-vm-kvm-docker.bench-quick.json): its
    allgather_busbw value 0.1385 GB/s lies outside its samples (0.0466 to 0.0766), so history would show
    a median above the maximum; it is left out, the other results are kept."""
    path = Path(__file__).resolve().parents[1] / "captures" / "cpu-vm-kvm-docker.bench-quick.json"
    names = [m.name for m in records.metrics_of("bench", json.loads(path.read_text()))]
    assert "allgather_busbw" not in names
    assert {"allreduce_busbw", "reducescatter_busbw", "broadcast_busbw", "matmul_fp32"} <= set(names)
    for m in records.metrics_of("bench", json.loads(path.read_text())):
        assert m.low <= m.value <= m.high, m
