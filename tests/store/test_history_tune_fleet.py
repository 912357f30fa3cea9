"""tune and fleet runs in the history: what is kept, under which (masked) identity, and that a corrupt or
locked database never costs the run its output."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuwise.cli import app
from gpuwise.commands.history import record_run
from gpuwise.store import records
from gpuwise.store.history import History, mask_host
from tests.tune.test_views import _tune_result


def test_tune_run_keeps_baseline_best_and_speedup_with_their_intervals(tmp_path):
    result = _tune_result()
    result.winner = 1
    doc = result.to_json_dict()
    record_run("tune", doc, tmp_path / "h.db", host="trainbox", extra_facts={"torch": "2.13.0+cpu"})
    with History(tmp_path / "h.db") as db:
        (run,) = db.runs(kind="tune")
    assert run.host == mask_host("trainbox") and "trainbox" not in json.dumps(run.facts)
    assert run.facts["workload"] == "mlp-slow-data" and run.facts["torch"] == "2.13.0+cpu"
    got = {m.name: (m.value, m.low, m.high) for m in run.metrics}
    assert got == {
        "tune/mlp-slow-data/baseline_samples_per_s": (100.0, 90.0, 110.0),
        "tune/mlp-slow-data/best_samples_per_s": (100.0, 90.0, 110.0),
        "tune/mlp-slow-data/speedup": (3.0, 0.9, 1.1),
    }
    listed = CliRunner().invoke(app, ["history", "list", "--history", str(tmp_path / "h.db")])
    assert listed.exit_code == 0 and " tune " in listed.stdout and mask_host("trainbox") in listed.stdout


def test_tune_without_a_winner_keeps_the_baseline_only():
    result = _tune_result()
    result.winner = None
    names = [m.name for m in records.metrics_of("tune", result.to_json_dict())]
    assert names == ["tune/mlp-slow-data/baseline_samples_per_s"]


@pytest.fixture(scope="module")
def fleet_dir(tmp_path_factory):
    from tests.conftest import REAL
    from tests.fleet.fleet_kit import build_fleet

    if not REAL.is_dir():
        pytest.skip(f"real fixtures not present at {REAL}")
    return build_fleet(tmp_path_factory.mktemp("gwfl-history"), count=12)


def _fleet_report(*args: str):
    return CliRunner().invoke(app, ["fleet", "report", *args])


def test_fleet_report_is_recorded_under_its_masked_node_set(fleet_dir, tmp_path):
    db_path = tmp_path / "h.db"
    for _ in range(2):
        r = _fleet_report(str(fleet_dir), "--json", "--history", str(db_path))
        assert r.exit_code == 1  # the edited nodes are odd
    doc = json.loads(r.stdout)
    with History(db_path) as db:
        runs = db.runs(kind="fleet")
    assert len(runs) == 2
    assert runs[0].host == mask_host("fleet:" + ",".join(f"node{i:02d}" for i in range(1, 13)))
    metrics = {m.name: m for m in runs[0].metrics}
    matmul = next(d for d in doc["distributions"] if d["metric"] == "matmul_bf16")
    assert metrics["fleet/matmul_bf16"].value == pytest.approx(matmul["median"])
    assert metrics["fleet/matmul_bf16"].low == pytest.approx(min(v["value"] for v in matmul["values"]))
    assert metrics["fleet/odd_nodes"].value == 3 and metrics["fleet/nodes"].value == 12  # node03, 07, 11
    assert runs[0].facts["software: NVIDIA driver"] == "580.159.04"
    listed = CliRunner().invoke(app, ["history", "list", "--kind", "fleet", "--history", str(db_path)])
    assert listed.exit_code == 0 and listed.stdout.count(" fleet ") == 2
    trend = CliRunner().invoke(app, ["history", "trend", "fleet/matmul_bf16", "--history", str(db_path)])
    assert trend.exit_code == 0 and f"{matmul['median']:.4g}" in trend.stdout


def test_fleet_report_follows_gpuwise_history_and_no_history(fleet_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUWISE_HISTORY", str(tmp_path / "env.db"))
    assert _fleet_report(str(fleet_dir), "--no-history", "--json").exit_code == 1
    assert not (tmp_path / "env.db").exists()
    assert _fleet_report(str(fleet_dir), "--json").exit_code == 1
    with History(tmp_path / "env.db") as db:
        assert [r.kind for r in db.runs()] == ["fleet"]


def test_fleet_report_output_survives_a_truncated_database(fleet_dir, tmp_path):
    db_path = tmp_path / "h.db"
    record_run("fleet", {"schema": "gpuwise-fleet/1", "nodes": [{"node": "a"}]}, db_path, host="x")
    db_path.write_bytes(db_path.read_bytes()[:1000])
    for suffix in ("-wal", "-shm"):
        Path(str(db_path) + suffix).unlink(missing_ok=True)
    broken = db_path.read_bytes()
    out = tmp_path / "report.html"
    r = subprocess.run(
        [sys.executable, "-m", "gpuwise.cli", "fleet", "report", str(fleet_dir), "--format", "html",
         "-o", str(out), "--history", str(db_path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 1, r.stderr[-2000:]  # the fleet's verdict, not a history failure
    assert "not recorded in the history" in r.stderr and "To fix:" in r.stderr and "Traceback" not in r.stderr
    assert out.read_text().rstrip().endswith("</html>") and "matmul_bf16" in out.read_text()
    assert db_path.read_bytes() == broken  # the broken file is left for the user to look at


def test_fleet_report_output_survives_a_locked_database(fleet_dir, tmp_path, monkeypatch):
    import gpuwise.store.history as history

    db_path = tmp_path / "h.db"
    record_run("fleet", {"schema": "gpuwise-fleet/1", "nodes": [{"node": "a"}]}, db_path, host="x")
    monkeypatch.setattr(history, "BUSY_TIMEOUT_S", 0.5)
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process in the middle of a write
    try:
        r = _fleet_report(str(fleet_dir), "--json", "--history", str(db_path))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert r.exit_code == 1
    assert json.loads(r.stdout)["schema"] == "gpuwise-fleet/1"
    assert "stayed locked" in r.stderr and "--no-history" in r.stderr


@pytest.mark.slow
def test_tune_output_survives_a_truncated_database(tmp_path):
    db_path = tmp_path / "h.db"
    db_path.write_bytes(b"SQLite format 3\x00" + b"\x00" * 84)  # a header and nothing else
    env_path = str(Path(__file__).parents[1] / "tune")
    import os

    r = subprocess.run(
        [sys.executable, "-m", "gpuwise.cli", "tune", "specs:fast_mlp", "--trials", "2", "--steps", "5",
         "--warmup", "1", "--storage", str(tmp_path / "tune.db"), "--history", str(db_path), "--json"],
        capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": env_path},
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout)["schema"] == "gpuwise-tune/1"
    assert "not recorded in the history" in r.stderr and "To fix:" in r.stderr
