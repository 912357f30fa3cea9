"""Whose data a run is: a `doctor --from` replay of another host's capture, and a bench of another
GPU model under the same hostname, stay out of this host's trends and regression baselines; a database
written by the schema-1 gpuwise (tests/store/data/history-v1.db.gz) is migrated in place."""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuwise.cli import app
from gpuwise.commands.history import record_run
from gpuwise.store.history import MIGRATIONS, History, mask_host

CAPTURES = Path(__file__).parents[1] / "captures"
H200 = CAPTURES / "h200-1gpu-kvm-vm"
# history-v1.db.gz: written by gpuwise at c2afebe (schema 1) with record_run: bench runs of
# cpu-vm-kvm-docker.bench-collective.json (1), cpu-vm-kvm-docker.bench-quick.json (2), the H200's
# h200-1gpu-kvm-vm.bench-quick.json (3, also hostname 'vm'), then `doctor --from h200-1gpu-kvm-vm
# --bench-results h200-1gpu-kvm-vm.bench-quick.json` (4, a replay); checkpointed, VACUUMed, gzipped.
OLD_DB = Path(__file__).parent / "data" / "history-v1.db.gz"


@pytest.fixture
def this_vm(monkeypatch):
    """This machine is the 2-core CPU VM of the recordings: hostname 'vm' (the H200's is 'vm' too)."""
    monkeypatch.setattr("socket.gethostname", lambda: "vm")


def _trend(path: Path, *args: str):
    return CliRunner().invoke(app, ["history", "trend", "matmul_fp32", "--history", str(path), *args])


def test_doctor_from_a_capture_is_a_replay_left_out_of_this_hosts_trend(tmp_path, this_vm, capsys):
    path = tmp_path / "h.db"
    record_run("bench", json.loads((CAPTURES / "cpu-vm-kvm-docker.bench-quick.json").read_text()), path)
    r = CliRunner().invoke(
        app,
        ["doctor", "--from", str(H200), "--bench-results", str(CAPTURES / "h200-1gpu-kvm-vm.bench-quick.json"),
         "--history", str(path), "--format", "json"],
    )  # fmt: skip
    assert r.exit_code == 1, r.output  # two warnings on the H200
    with History(path) as db:
        replay, live = db.runs()
    assert (replay.kind, replay.origin, replay.gpu) == ("doctor", "replay", "NVIDIA H200")
    assert replay.host == mask_host("host-1")  # the captured host's id, not this one's
    assert (live.origin, live.gpu, live.host) == ("live", "none", mask_host("vm"))
    mine = _trend(path)
    assert mine.exit_code == 0 and "0.0737" in mine.output and "51.96" not in mine.output
    everyone = _trend(path, "--host", "all", "--format", "json")
    series = json.loads(everyone.output)["series"]
    assert [(s["gpu"], s["origin"]) for s in series] == [("none", "live"), ("NVIDIA H200", "replay")]


def test_a_schema_1_database_is_migrated_in_place(tmp_path, this_vm):
    path = tmp_path / "old.db"
    path.write_bytes(gzip.decompress(OLD_DB.read_bytes()))
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 1
    with History(path) as db:
        assert db.schema_version() == MIGRATIONS[-1][0] == 2
        runs = {r.id: r for r in db.runs()}
        assert db.get(3).document["environment"]["gpus"] == ["NVIDIA H200"]  # documents kept as they were
    assert {i: (r.gpu, r.origin) for i, r in runs.items()} == {
        1: ("none", "live"),
        2: ("none", "live"),
        3: ("NVIDIA H200", "live"),  # the H200's own bench: same hostname 'vm', another GPU model
        4: ("NVIDIA H200", "replay"),
    }
    mine = _trend(path, "--format", "json")
    series = json.loads(mine.output)["series"]
    # this host's live runs, one series per GPU model: the CPU VM's 0.07 never joins the H200's 51.96
    assert [(s["gpu"], s["runs"]) for s in series] == [("NVIDIA H200", [3]), ("none", [2])]
    # a new bench of this VM is compared only with this VM's runs: 1 of them has matmul_fp32
    run = json.loads((CAPTURES / "cpu-vm-kvm-docker.bench-quick.json").read_text())
    run["created_at"] = "2026-12-01T00:00:00+00:00"
    from gpuwise.store.regress import check

    with History(path) as db:
        past = db.runs(kind="bench", host=mask_host("vm"), gpu="none", origin="live")
    from gpuwise.store import records

    found = check(records.metrics_of("bench", run), {}, past)
    assert found.too_short["matmul_fp32"] == 1 and found.too_short["allreduce_busbw"] == 2


def test_the_migration_fills_every_run_of_a_long_history(tmp_path):
    """Migration 2 reads the documents in batches of 100: all 250 runs (and a damaged one) are filled."""
    path = tmp_path / "long.db"
    doc = json.dumps({"schema": "gpuwise-bench/1", "environment": {"gpus": ["NVIDIA H200"]}})
    with sqlite3.connect(path) as raw:
        for statement in MIGRATIONS[0][1]:
            raw.execute(statement)
        raw.executemany(
            "INSERT INTO runs (kind, created_at, host, facts_digest, facts, document) VALUES (?, ?, ?, ?, ?, ?)",
            [("bench", f"2026-11-01T00:00:{i % 60:02d}", "host-x", "d", "{}", doc) for i in range(250)]
            + [("bench", "2026-11-02", "host-x", "d", "{}", "{not json")],
        )
        raw.execute("PRAGMA user_version = 1")
    with History(path) as db:
        runs = db.runs(limit=1000)
    assert len(runs) == 251
    assert sorted({r.gpu for r in runs}) == ["", "NVIDIA H200"]  # the damaged document keeps the default
    assert sum(r.gpu == "NVIDIA H200" for r in runs) == 250 and {r.origin for r in runs} == {"live"}


def test_a_live_doctor_with_another_hosts_bench_file_is_a_replay():
    from gpuwise.documents.doctor import DoctorReport
    from gpuwise.store.identity import doctor_origin

    facts = {"gpus": [{"name": "NVIDIA H200"}]}
    bench = {"schema": "gpuwise-bench/1", "hostname": "vm", "environment": {"gpus": ["NVIDIA H200"]},
             "results": [{"name": "x", "layer": "compute"}]}  # fmt: skip

    def origin(**doc) -> str:
        return doctor_origin(DoctorReport.model_validate({"schema": "gpuwise-report/1", **doc}))

    assert origin(hostname="vm", facts=facts, measurements=bench) == "live"
    assert origin(hostname="node7", facts=facts, measurements=bench) == "replay"
    assert origin(hostname="vm", facts={"gpus": []}, measurements=bench) == "replay"
    assert origin(hostname="vm", facts=facts, source="node7.tar.gz") == "replay"


def test_a_live_doctor_run_is_recorded_as_live(tmp_path):
    """A live probe's facts carry source "live": that is this host's own data, not a replay."""
    path = tmp_path / "h.db"
    r = CliRunner().invoke(app, ["doctor", "--history", str(path), "--format", "json"])
    assert r.exit_code in (0, 1, 2), r.output
    with History(path) as db:
        (run,) = db.runs()
    assert (run.kind, run.origin) == ("doctor", "live")
