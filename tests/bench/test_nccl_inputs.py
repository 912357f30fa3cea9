"""doctor --nccl-log: nccl-tests outputs (both table layouts, -J JSON) and NCCL_DEBUG=INFO logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import real_files
from gpuwise.advise.engine import registry, run_rules
from gpuwise.bench.nccl_debug import parse_nccl_debug, uses_socket
from gpuwise.bench.nccl_files import merge_into, read_nccl_files
from gpuwise.bench.nccl_tests import parse, to_measurement
from gpuwise.errors import UserInputError
from gpuwise.facts.models import Facts, RdmaDevice, RdmaPort

# Expected busbw plateaus (median of the three largest sizes), read off the files by hand.
PLATEAUS = {
    "superbench_nccl_allreduce.log": ("all_reduce", 234.37),
    "superbench_nccl_reducescatter.log": ("reduce_scatter", 229.15),
    "awsome-distributed-training_aws-batch_all_reduce_perf_mpirun-prefixed.log": ("all_reduce", 480.43),
}


@pytest.mark.parametrize("path", real_files("nccl_tests"), ids=lambda p: p.name)
def test_real_nccl_tests_logs_parse(path):
    run = parse(path.read_text(), path.name)
    assert run.rows and all(r["busbw_gb_s"] >= 0 for r in run.rows)
    m = to_measurement(run, path.name)
    assert m.status == "ok" and m.value > 100  # every real log is from an 8-GPU node or more
    if path.name in PLATEAUS:
        op, busbw = PLATEAUS[path.name]
        assert (run.op, m.value) == (op, busbw)


def test_single_node_a100_judged_against_nvlink(real):
    path = real / "nccl_tests" / "superbench_nccl_allreduce.log"
    (m,), logs = read_nccl_files([path])
    assert logs == []  # its one interleaved INFO line ("Launch mode Parallel") says nothing worth a log
    assert m.peak == 300.0 and round(m.percent_of_peak) == 78  # A100 SXM: 600 GB/s bidirectional NVLink
    assert len(m.params["sizes"]) == 32 and m.params["ranks"] == 8


# The newer layout (root and #wrong columns, per-rank Group), laid out as nccl-tests 2.13+ prints it.
NEW_LAYOUT = """\
# nccl-tests version 2.13.11 nccl-headers=22105 nccl-library=22105
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4294967296 step: 4(factor) warmup iters: 5 iters: 20
#
# Using devices
#  Rank  0 Group  0 Pid   4101 on    node-a device  0 [0000:18:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid   4102 on    node-b device  0 [0000:18:00] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)
     1048576        262144     float     sum      -1    60.10   17.45   17.45       0    59.80   17.53   17.53       0
    67108864      16777216     float     sum      -1   1490.2   45.03   45.03       0   1488.0   45.10   45.10       0
  1073741824     268435456     float     sum      -1  22000.0   48.81   48.81       0  21990.0   48.83   48.83       0
  4294967296    1073741824     float     sum      -1  87500.0   49.09   49.09       0  87400.0   49.14   49.14       0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 40.1
"""


def test_newer_layout_two_nodes_has_no_peak():
    run = parse(NEW_LAYOUT)
    assert (run.op, run.nodes, len(run.rows)) == ("all_reduce", 2, 4)
    m = to_measurement(run, "x")
    assert m.value == 48.81 and m.peak is None and "nodes" in m.peak_source.text
    assert m.peak_source.kind == "none"
    m.model_dump()  # a PeakSource, not a str: no "Pydantic serializer warnings" (an error in tests)


def test_json_output_version_2(tmp_path):
    doc = {
        "version": 2,
        "args": ["./build/all_gather_perf", "-b", "8", "-e", "1G"],
        "config": {
            "ngpus": 1,
            "devices": [{"rank": 0, "hostname": "n1", "device_info": "NVIDIA H100 80GB HBM3"}],
        },
        "results": [
            {
                "size": s,
                "out_of_place": {"time": 1.0, "alg_bw": b, "bus_bw": b, "nwrong": 0},
                "in_place": None,
            }
            for s, b in ((1 << 20, 10.0), (1 << 28, 300.0), (1 << 29, 310.0), (1 << 30, 320.0))
        ],
        "average_bus_bandwidth": {"bandwidth": 235.0, "okay": "unchecked"},
    }
    path = tmp_path / "ag.json"
    path.write_text(json.dumps(doc))
    (m,), _ = read_nccl_files([path])
    assert m.name == "nccl_tests_all_gather_busbw" and m.value == 310.0 and m.peak == 450.0  # H100 NVLink4


@given(st.text(max_size=2000))
def test_parsers_never_raise_on_garbage(text):
    parse_nccl_debug(text, "g")
    run = parse("#  size count type redop time algbw busbw error time algbw busbw error\n" + text)
    to_measurement(run, "g")


INFO_SOCKET = """\
node1:2104:2104 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.
node1:2104:2104 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.0.11<0>
node1:2104:2104 [0] NCCL INFO Using network Socket
node1:2104:2104 [0] NCCL INFO NCCL version 2.21.5+cuda12.4
node1:2104:2161 [0] NCCL INFO comm 0x55d1c0a0 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0
node1:2104:2161 [0] NCCL INFO Channel 00/0 : 7[7] -> 8[0] [send] via NET/Socket/0
node1:2104:2161 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC
node1:2104:2161 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo 1 proto 2 time 36.020000
node1:2104:2170 [0] NCCL WARN NET/Socket : peer 10.1.0.12<45678> message truncated
"""
INFO_IB = """\
[1,0]<stdout>:gpu-a:77:77 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.2.0.1<0>
[1,0]<stdout>:gpu-a:77:77 [0] NCCL INFO Using network IB
[1,0]<stdout>:gpu-a:77:90 [0] NCCL INFO NVLS multicast support is available on dev 0
[1,0]<stdout>:gpu-a:77:90 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via NET/IB/0/GDRDMA
"""


def test_debug_log_summary():
    log = parse_nccl_debug(INFO_SOCKET, "job.log")
    assert (log.version, log.ranks, log.nodes, log.networks) == ("2.21.5+cuda12.4", 16, 2, ["Socket"])
    assert log.transports == {"NET/Socket/0": 1, "P2P/IPC": 1}
    assert log.algorithms == {"AllReduce": ["Ring"]} and log.env == {"NCCL_IB_DISABLE": "1"}
    assert uses_socket(log) and len(log.warnings) == 1
    ib = parse_nccl_debug(INFO_IB, "ib.log")
    assert ib.networks == ["IB"] and ib.nvls is True and not uses_socket(ib)
    assert ib.transports == {"NET/IB/0/GDRDMA": 1}


def _findings(text: str, facts: Facts | None = None, ids=("nccl.socket_transport",)):
    rules = [registry()[i] for i in ids]
    return run_rules(facts or Facts(), None, "onprem", rules, nccl_logs=[parse_nccl_debug(text, "job.log")])


def test_socket_with_ib_disabled_but_no_rdma_evidence_is_a_warning():
    # The job disabled IB on purpose; nothing says the node has RDMA: a warning, not a proven loss (critical).
    (f,) = _findings(INFO_SOCKET)
    assert f.status == "warn" and "NCCL_IB_DISABLE" in f.recommendation.text


def test_socket_with_active_rdma_ports_is_critical():
    facts = Facts()
    facts.network.rdma_devices = [RdmaDevice(name="mlx5_0", ports=[RdmaPort(port=1, state="ACTIVE")])]
    (f,) = _findings(INFO_SOCKET.replace("NCCL_IB_DISABLE set by environment to 1.", "x"), facts)
    assert f.status == "fail" and any("rdma_devices" in e.path for e in f.evidence)


def test_socket_on_ethernet_only_is_expected():
    (f,) = _findings(INFO_SOCKET.replace("NCCL_IB_DISABLE set by environment to 1.", "x"))
    assert f.status == "info" and f.recommendation.env == {
        "NCCL_SOCKET_NTHREADS": "4",
        "NCCL_NSOCKS_PERTHREAD": "4",
    }


def test_ib_run_passes_and_other_log_rules():
    (f,) = _findings(INFO_IB)
    assert f.status == "pass"
    statuses = {
        f.id: f.status for f in _findings(INFO_SOCKET, ids=("nccl.log_warnings", "nccl.job_debug_vars"))
    }
    assert statuses == {"nccl.log_warnings": "warn", "nccl.job_debug_vars": "warn"}


def test_files_that_are_neither_are_refused(tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n")
    with pytest.raises(UserInputError, match="neither nccl-tests results nor NCCL debug lines"):
        read_nccl_files([bad])
    with pytest.raises(UserInputError, match="cannot read"):
        read_nccl_files([tmp_path / "missing.log"])


def test_merge_keeps_the_users_bench_report():
    assert merge_into(None, []) is None
    run = parse(NEW_LAYOUT)
    report = merge_into(None, [to_measurement(run, "x")])
    assert [m.name for m in report.results] == ["nccl_tests_all_reduce_busbw"]


def test_doctor_cli_accepts_nccl_logs(tmp_path, capsys):
    from gpuwise.cli import app

    log = tmp_path / "job.log"
    log.write_text(INFO_SOCKET)
    captures = Path(__file__).parents[1] / "captures" / "cpu-vm-kvm-docker"
    from typer.testing import CliRunner

    result = CliRunner().invoke(
        app, ["doctor", "--from", str(captures), "--nccl-log", str(log), "--format", "json"]
    )
    ids = {f["id"]: f["status"] for f in json.loads(result.stdout)["findings"]}
    assert ids["nccl.socket_transport"] == "warn" and result.exit_code == 1, result.output
