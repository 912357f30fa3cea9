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


def _broken_fio(sandbox) -> dict[str, str]:
    """An environment whose only `fio` exits 1 (a tool that is there but fails: the benchmark fails)."""
    bin_dir = sandbox.root / "bin"
    bin_dir.mkdir(exist_ok=True)
    fio = bin_dir / "fio"
    fio.write_text("#!/bin/sh\necho 'fio: broken on purpose' >&2\nexit 1\n")
    fio.chmod(0o755)
    return sandbox.env(PATH=str(bin_dir))


def test_a_failed_benchmark_stops_the_run_and_exits_4(sandbox):
    sandbox.freeze_inputs()
    env = _broken_fio(sandbox)  # fio runs and fails: the storage benchmark fails
    out = sandbox.run("bench", "--only", "storage,dataloader", "--save", "r.json", env=env, timeout=300)
    assert out.rc == EXIT_BENCH_FAILED, out.stderr[-2000:]
    assert "benchmark(s) failed: storage" in out.stderr and "--keep-going" in out.stderr
    rows = {m["name"]: m for m in json.loads((sandbox.work / "r.json").read_text())["results"]}
    assert rows["storage"]["status"] == "failed" and "broken on purpose" in rows["storage"]["reason"]
    assert (
        rows["dataloader"]["status"] == "skipped" and "storage failed first" in rows["dataloader"]["reason"]
    )
    sandbox.allowed_outputs = {"r.json"}


def test_keep_going_exits_0_with_the_failure_as_a_row(sandbox):
    sandbox.freeze_inputs()
    env = _broken_fio(sandbox)
    out = sandbox.run("bench", "--only", "storage", "--keep-going", env=env, timeout=300)
    assert out.rc == EXIT_OK, out.stderr[-2000:]
    assert "broken on purpose" in out.stdout
