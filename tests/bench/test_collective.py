"""Collectives for real on CPU: 2 gloo ranks on loopback, under gpuwise's launcher and under torchrun,
and ranks that die or stop mid-run (the survivors must fail cleanly, in bounded time)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuwise.bench import collective
from gpuwise.bench.collective_rank import BUS_FACTOR, RankInfo, iterations, rank_from_env
from gpuwise.documents.bench import BenchReport, Measurement
from gpuwise.errors import EnvironmentProblem, UserInputError

SMALL = collective.Spec(
    sizes=(8, 4096, 1 << 20), backend="gloo", warmup=1, repeats=3, target_bytes=4 << 20, timeout_s=20
)


def test_two_gloo_ranks_report_algbw_busbw_plateau_and_slowest_rank():
    results = [Measurement.model_validate(d) for d in collective.launch(SMALL, deadline_s=120)]
    assert [m.name for m in results] == [
        "allreduce_busbw",
        "allgather_busbw",
        "reducescatter_busbw",
        "broadcast_busbw",
    ]
    for m in results:
        op = m.params["op"]
        table = m.extra["table"]
        assert [r["bytes"] for r in table] == [8, 4096, 1 << 20] or op in ("all_gather", "reduce_scatter")
        for row in table:
            # nccl-tests: algbw = bytes / time; busbw = algbw x factor(n)
            assert row["algbw_gb_s"] == pytest.approx(row["bytes"] / (row["time_us"] * 1e-6) / 1e9, rel=0.01)
            assert row["busbw_gb_s"] == pytest.approx(row["algbw_gb_s"] * BUS_FACTOR[op](2), rel=0.01)
            assert len(row["per_rank_time_us"]) == 2 and row["slowest_rank"] in (0, 1)
        assert m.value > 0 and m.status == "ok" and m.peak is None and "gloo" in m.peak_source.text
        assert m.params["world_size"] == 2 and m.params["backend"] == "gloo"


def test_busbw_factors_match_nccl_tests():
    assert BUS_FACTOR["all_reduce"](8) == pytest.approx(1.75)
    assert BUS_FACTOR["all_gather"](8) == pytest.approx(0.875)
    assert BUS_FACTOR["reduce_scatter"](4) == pytest.approx(0.75)
    assert BUS_FACTOR["broadcast"](8) == 1.0
    assert iterations(8, 1 << 30, 20) == 20 and iterations(1 << 30, 1 << 20, 20) == 1


def test_rank_identity_from_torchrun_and_srun_env():
    info = rank_from_env({"RANK": "3", "WORLD_SIZE": "16", "LOCAL_RANK": "3", "LOCAL_WORLD_SIZE": "8"})
    assert info == RankInfo(3, 16, 3, 8, "torchrun") and info.nodes == 2
    slurm = {
        "SLURM_PROCID": "9",
        "SLURM_NTASKS": "16",
        "SLURM_LOCALID": "1",
        "SLURM_NTASKS_PER_NODE": "8(x2)",
        "MASTER_ADDR": "node1",
    }
    assert rank_from_env(slurm) == RankInfo(9, 16, 1, 8, "srun")
    with pytest.raises(UserInputError, match="MASTER_ADDR"):
        rank_from_env({k: v for k, v in slurm.items() if k != "MASTER_ADDR"})
    with pytest.raises(UserInputError, match="torchrun"):
        rank_from_env({})


def _torchrun() -> str | None:
    """torchrun installed with this interpreter's torch (`make test` does not put .venv/bin on PATH)."""
    beside = Path(sys.executable).parent / "torchrun"
    return str(beside) if beside.is_file() else shutil.which("torchrun")


def test_module_under_torchrun_with_two_cpu_ranks(tmp_path):
    torchrun = _torchrun()
    if torchrun is None:
        pytest.skip(f"torchrun neither beside {sys.executable} nor on PATH")
    out = tmp_path / "c.json"
    env = dict(os.environ, OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME="lo")
    proc = subprocess.run(
        [
            torchrun,
            "--nproc-per-node",
            "2",
            "--master-addr",
            "127.0.0.1",
            "--master-port",
            str(collective._free_port()),
            "-m",
            "gpuwise.bench.collective",
            "--sizes",
            "8,64K,1M",
            "--ops",
            "all_reduce,broadcast",
            "--repeats",
            "2",
            "--warmup",
            "1",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "all_reduce" in proc.stdout and "busbw GB/s" in proc.stdout  # rank 0 printed the table
    report = BenchReport.model_validate(json.loads(out.read_text()))
    assert [m.name for m in report.results] == ["allreduce_busbw", "broadcast_busbw"]
    m = report.results[0]
    assert m.params["launcher"] == "torchrun" and m.params["world_size"] == 2 and m.value > 0


def _start_ranks(tmp_path, extra_args: list[str]):
    port = collective._free_port()
    spec = collective.Spec(
        sizes=(64 << 20,),
        ops=("all_reduce",),
        backend="gloo",
        warmup=1,
        repeats=1000,
        target_bytes=64 << 20,
        max_iters=1,
        timeout_s=5,
    )
    cmd = [
        sys.executable,
        "-m",
        "gpuwise.bench.collective",
        *spec.argv(str(tmp_path / "out.json")),
        *extra_args,
    ]
    procs = [
        subprocess.Popen(
            cmd,
            env=collective.rank_env(dict(os.environ), r, 2, port, 1, True),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for r in range(2)
    ]
    # wait until rank 0 is timing (it prints a progress line), so the peer fails mid-collective
    line = procs[0].stdout.readline()
    assert line.startswith("progress:"), line + procs[0].stderr.read()
    time.sleep(1.0)
    return procs


@pytest.mark.parametrize("how", ["SIGKILL", "SIGSTOP"])
def test_survivor_fails_cleanly_when_a_peer_dies_or_hangs(tmp_path, how):
    procs = _start_ranks(tmp_path, [])
    victim = procs[1]
    start = time.monotonic()
    victim.send_signal(getattr(signal, how))
    try:
        code = procs[0].wait(timeout=60)  # pg timeout 5 s; watchdog at 5 + 15 s: far below 60
        elapsed = time.monotonic() - start
    finally:
        if how == "SIGSTOP":
            victim.send_signal(signal.SIGCONT)
        victim.kill()
        victim.wait()
    err = procs[0].stderr.read()
    assert code != 0, err
    assert elapsed < 30, f"survivor took {elapsed:.1f} s"
    assert "rank failed" in err or "no progress" in err, err[-1500:]
    assert not (tmp_path / "out.json").exists()  # no half result written


def test_launcher_reports_which_rank_failed(monkeypatch):
    # every rank gets an argument it rejects: the launcher must name a failed rank and its message
    spec = collective.Spec(sizes=(8,), ops=("all_reduce",), backend="gloo", warmup=1, repeats=1, timeout_s=5)
    monkeypatch.setattr(collective.Spec, "argv", lambda self, path: ["--sizes", "not-a-size"])
    with pytest.raises(EnvironmentProblem, match=r"collective rank \d failed .*not a size"):
        collective.launch(spec, deadline_s=60)
