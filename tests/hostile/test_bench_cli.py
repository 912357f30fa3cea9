"""`gpuwise bench` exit codes and --data-dir as users pass them (real CLI, real forkserver and fio)."""

from __future__ import annotations

import json
import shutil

import pytest

from gpuwise.errors import EXIT_BENCH_FAILED, EXIT_OK

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")


def test_relative_data_dir_measures_storage_and_leaves_it_empty(sandbox):
    (sandbox.work / "dd").mkdir()
    sandbox.freeze_inputs()
    out = sandbox.run("bench", "--only", "storage", "--data-dir", "dd", "--save", "r.json", timeout=300)
    assert out.rc == EXIT_OK, out.stderr[-2000:]
    rows = json.loads((sandbox.work / "r.json").read_text())["results"]
    assert rows and all(m["status"] == "ok" for m in rows), rows
    assert not list((sandbox.work / "dd").iterdir())
    sandbox.allowed_outputs = {"r.json"}


def test_a_failed_benchmark_stops_the_run_and_exits_4(sandbox):
    sandbox.freeze_inputs()
    env = sandbox.env(PATH="/nonexistent")  # no fio: the storage benchmark fails
    out = sandbox.run("bench", "--only", "storage,dataloader", "--save", "r.json", env=env, timeout=300)
    assert out.rc == EXIT_BENCH_FAILED, out.stderr[-2000:]
    assert "benchmark(s) failed: storage" in out.stderr and "--keep-going" in out.stderr
    rows = {m["name"]: m for m in json.loads((sandbox.work / "r.json").read_text())["results"]}
    assert rows["storage"]["status"] == "failed" and "fio is not installed" in rows["storage"]["reason"]
    assert (
        rows["dataloader"]["status"] == "skipped" and "storage failed first" in rows["dataloader"]["reason"]
    )
    sandbox.allowed_outputs = {"r.json"}


def test_keep_going_exits_0_with_the_failure_as_a_row(sandbox):
    sandbox.freeze_inputs()
    env = sandbox.env(PATH="/nonexistent")
    out = sandbox.run("bench", "--only", "storage", "--keep-going", env=env, timeout=300)
    assert out.rc == EXIT_OK, out.stderr[-2000:]
    assert "fio is not installed" in out.stdout
