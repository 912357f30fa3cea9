"""The preflight's parts without a cluster: dcgmi diag read by doctor, the allocation check on loopback, the
link floor, and the verdict that names which node failed which check."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuwise.fleet.allocation import link_failures
from gpuwise.launch import steps
from gpuwise.launch.job import Job
from gpuwise.launch.verdict import judge
from gpuwise.launch.verdict import main as verdict_main

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DCGM_GPU0_FAIL = REPO / "tests" / "fixtures" / "evidence" / "dcgm" / "go-dcgm-issue52_diag-r2_gpu0-fail.txt"


def _job(**kw) -> Job:
    return Job(name="pf-test", command="torchrun train.py", gpus_per_node=0, **kw)


def test_dcgmi_diag_failure_on_one_gpu_fails_the_node(tmp_path):
    """A stand-in dcgmi prints a real `dcgmi diag` table (GPU 0 failed) and exits non-zero, as dcgmi does."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "dcgmi").write_text(f"#!/bin/sh\ncat {DCGM_GPU0_FAIL}\nexit 226\n")
    (bindir / "dcgmi").chmod(0o755)
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", OUT=str(tmp_path), NODE="n1",
               GPUWISE=str(BIN / "gpuwise"))  # fmt: skip
    p = subprocess.run(
        ["bash", "-c", steps.preflight(_job())], env=env, capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 1, p.stdout + p.stderr
    report = json.loads((tmp_path / "preflight" / "n1.json").read_text())
    assert any(f["id"] == "gpu.dcgm_diag" and f["status"] == "fail" for f in report["findings"])
    assert "n1 is not fit to train" in p.stderr


def test_without_dcgmi_the_preflight_is_doctor_alone(tmp_path):
    env = dict(os.environ, PATH="/usr/bin:/bin", OUT=str(tmp_path), NODE="n1", GPUWISE=str(BIN / "gpuwise"))
    p = subprocess.run(
        ["bash", "-c", steps.preflight(_job())], env=env, capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert not (tmp_path / "preflight" / "n1.dcgmi.json").exists()


def _allocation(
    tmp_path, nodes: list[str], ranks: list[int], port: int, timeout_s: float, *more: str
) -> list[subprocess.CompletedProcess]:
    """One check process per rank; each step waits up to timeout_s (a loaded CI machine takes seconds to
    import torch in three processes at once, so the timeout is what a rank that never comes costs)."""
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gpuwise.fleet.allocation",
                "--nodes",
                " ".join(nodes),
                "--rank",
                str(r),
                "--port",
                str(port),
                "--out",
                str(tmp_path),
                "--bytes",
                "1M",
                "--repeats",
                "1",
                "--timeout",
                str(timeout_s),
                *more,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )  # fmt: skip
        for r in ranks
    ]
    for p in procs:
        p.output = p.communicate(timeout=5 * timeout_s + 60)[
            0
        ]  # every step bounded by timeout_s: never a hang
    return procs


def _port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_allocation_check_passes_on_loopback_and_names_a_rank_that_never_came(tmp_path):
    nodes = ["127.0.0.1", "127.0.0.2", "127.0.0.3"]  # three loopback addresses: three "nodes"
    # judged against a rated speed loopback always exceeds (0.25 x 1 MB/s): against the peers' median, one
    # 1 MiB transfer per pair on a loaded machine made a node "slow" (test_link_floor_... tests that path)
    ok = _allocation(tmp_path / "ok", nodes, [0, 1, 2], _port(), 120, "--rated-gb-s", "0.001")
    assert [p.returncode for p in ok] == [0, 0, 0], [p.output for p in ok]
    head = json.loads((tmp_path / "ok" / "127.0.0.1.allocation.json").read_text())
    assert [(c["check"], c["status"]) for c in head["checks"]] == [("reach", "pass"), ("allreduce", "pass"),
                                                                     ("links", "pass")]  # fmt: skip
    assert len(json.loads((tmp_path / "ok" / "links.json").read_text())["pairs"]) == 6
    # rank 1 never starts: the head waits its timeout, names it, and the others stop without an all-reduce
    bad = _allocation(tmp_path / "bad", nodes, [0, 2], _port(), 40)
    assert [p.returncode for p in bad] == [1, 0], [p.output for p in bad]
    head = json.loads((tmp_path / "bad" / "127.0.0.1.allocation.json").read_text())
    assert [(f["node"], f["check"]) for f in head["failed"]] == [("127.0.0.2", "reach")]
    for n in nodes:  # the nodes' own checks passed: the verdict pins the failure on 127.0.0.2 alone
        (tmp_path / "bad" / f"{n}.json").write_text(json.dumps(_doctor()))
    verdict = judge(tmp_path / "bad", nodes)
    assert verdict["exclude"] == ["127.0.0.2"] and verdict["unpinned"] == []


def _pairs(gb: dict[tuple[str, str], float]) -> list[dict]:
    return [{"src": s, "dst": d, "best_gb_s": v} for (s, d), v in gb.items()]


def test_link_floor_pins_a_slow_node_among_three_and_not_between_two():
    fast, slow = 2.0, 0.01
    three = _pairs({("a", "b"): fast, ("b", "a"): fast, ("a", "c"): slow, ("c", "a"): slow, ("b", "c"): slow,
                    ("c", "b"): slow})  # fmt: skip
    failed, _ = link_failures(three, ["a", "b", "c"], None)
    assert {f["node"] for f in failed} == {"c"}
    failed, notes = link_failures(_pairs({("a", "b"): slow, ("b", "a"): slow}), ["a", "b"], None)
    assert failed == [] and "cannot be pinned" in notes[0]
    # with the fabric's rated speed, two nodes are judged against it
    failed, _ = link_failures(_pairs({("a", "b"): slow, ("b", "a"): fast}), ["a", "b"], rated_gb_s=1.0)
    assert {(f["node"], f["reason"].split()[1]) for f in failed} == {("b", "receive"), ("a", "send")}


def _write(folder: Path, name: str, doc: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(doc))


def _doctor(status: str = "pass") -> dict:
    return {"findings": [{"id": "expect.gpus", "title": "GPUs as expected", "status": status}]}


def test_verdict_names_the_node_and_check_and_says_when_a_failure_is_not_a_node(tmp_path, capsys):
    nodes = ["n1", "n2", "n3"]
    one = tmp_path / "one"
    for n in nodes:
        _write(one, f"{n}.json", _doctor("fail" if n == "n3" else "pass"))
        _write(one, f"{n}.allocation.json", {"node": n, "checks": [], "failed": []})
    assert (
        verdict_main([str(one), "--nodes", "n1,n2,n3", "--job", "7", "--exclude-file", str(one / "ex")]) == 1
    )
    assert (one / "ex").read_text().strip() == "n3"
    assert "n3 failed doctor: expect.gpus: GPUs as expected" in capsys.readouterr().out
    assert json.loads((one / "verdict-7.json").read_text())["exclude"] == ["n3"]
    # every node failed the same check: the job's problem, nothing to exclude
    every = tmp_path / "every"
    for n in nodes:
        _write(every, f"{n}.json", _doctor("fail"))
    assert verdict_main([str(every), "--nodes", "n1 n2 n3"]) == 2
    # no node reached the head: the head is the one cut off
    cut = tmp_path / "cut"
    for n in nodes:
        _write(cut, f"{n}.json", _doctor())
    _write(cut, "n1.allocation.json", {"node": "n1", "checks": [{"check": "reach", "status": "fail", "reason": "1 of 3"}],
                                       "failed": [{"node": n, "check": "reach", "reason": "x"} for n in ("n2", "n3")]})  # fmt: skip
    assert judge(cut, nodes)["exclude"] == ["n1"]
    # an all-reduce that failed everywhere is pinned on no node
    broken = tmp_path / "broken"
    for n in nodes:
        _write(broken, f"{n}.json", _doctor())
        _write(broken, f"{n}.allocation.json", {"node": n, "checks": [{"check": "allreduce", "status": "fail",
                                                                        "reason": "gloo"}], "failed": []})  # fmt: skip
    v = judge(broken, nodes)
    assert v["exclude"] == [] and v["unpinned"] == ["allreduce: gloo"]


@pytest.mark.parametrize("resubmit", [0, 3])
def test_the_sbatch_script_resubmits_without_the_failed_nodes_up_to_the_limit(resubmit):
    from gpuwise.launch.slurm import preflight_block

    text = "\n".join(preflight_block('bash "$OUT/node.sh"', resubmit))
    assert f'[ "$ATTEMPT" -le {resubmit} ]' in text
    assert 'sbatch --parsable --export=ALL --exclude="$ALL"' in text
    assert 'srun --ntasks-per-node=1 bash "$OUT/node.sh" allocation' in text
