"""nccl.collective_vs_fabric: an nccl-tests result judged against the NICs its NCCL_DEBUG=INFO lines show."""

from __future__ import annotations

from pathlib import Path

from gpuwise.advise.engine import registry, run_rules
from gpuwise.bench.nccl_debug import gpus_per_node, net_nics, parse_nccl_debug, uses_gdrdma
from gpuwise.bench.nccl_files import merge_into, read_nccl_text
from gpuwise.facts.models import Facts, RdmaDevice, RdmaPort

HOSTS = ("gpu-a", "gpu-b")


def _log(op: str, nics: int, busbw: float) -> str:
    using = " ".join(f"[{i}]mlx5_{i}:1/IB" for i in range(nics))
    ranks = "\n".join(
        f"#  Rank {r:2d} Group  0 Pid {100 + r} on {HOSTS[r // 8]} device  {r % 8} [0x{r:02x}] NVIDIA H100 80GB HBM3"
        for r in range(16)
    )
    rows = "\n".join(
        f"  {size:>11d} {size // 4:>12d}     float    none      -1   9999.0  {busbw:6.2f}  {busbw:6.2f}      0"
        f"   9999.0  {busbw:6.2f}  {busbw:6.2f}      0"
        for size in (1 << 30, 1 << 31, 1 << 32)
    )
    return f"""\
# Collective test starting: {op}_perf
{ranks}
gpu-a:77:77 [0] NCCL INFO NET/IB : Using {using} ; OOB ib0:10.2.0.1<0>
gpu-a:77:77 [0] NCCL INFO Using network IB
gpu-a:77:90 [0] NCCL INFO comm 0x55d1c0a0 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0
gpu-a:77:90 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via NET/IB/0/GDRDMA
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
{rows}
"""


def _facts(nics: int, rate: float | None = 400.0) -> Facts:
    facts = Facts()
    facts.network.rdma_devices = [
        RdmaDevice(name=f"mlx5_{i}", ports=[RdmaPort(port=1, state="ACTIVE", rate_gbps=rate)])
        for i in range(nics)
    ]
    return facts


def _judge(op: str, nics: int, busbw: float, facts: Facts):
    measurements, logs = read_nccl_text(_log(op, nics, busbw), Path(f"{op}.log"), "--nccl-log")
    findings = run_rules(
        facts, merge_into(None, measurements), "onprem", [registry()["nccl.collective_vs_fabric"]], logs
    )
    return findings


def test_log_fabric_fields():
    log = parse_nccl_debug(_log("alltoall", 8, 48.0), "a.log")
    assert net_nics(log) == {str(i): f"mlx5_{i}:1/IB" for i in range(8)}
    assert gpus_per_node(log) == 8 and uses_gdrdma(log)


TWO_NICS_ONE_USED = """\
n1:10:10 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_2:1/IB [RO]; OOB ib0:10.0.0.1<0>
n1:10:20 [0] NCCL INFO               + NET[25.0] - NET/1 (7a85000000000001/1/25.000000)
n1:10:20 [0] NCCL INFO              + NET[3.1] - NET/0 (b8e2000000000002/1/3.125000)
n1:10:20 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0
n1:10:20 [0] NCCL INFO Channel 00/0 : 1[81000] -> 0[81000] [receive] via NET/IB/1/GDRDMA/Shared
"""


def test_nics_used_and_their_rate_come_from_the_log():
    log = parse_nccl_debug(TWO_NICS_ONE_USED, "g.log")
    assert log.net_bw_gb_s == {"1": 25.0, "0": 3.125} and uses_gdrdma(log)
    # the node's only rank logged its connection: NET/1 is the NIC used, NET/0 (RoCE, 25 Gb/s) was idle
    assert net_nics(log) == {"1": "mlx5_2:1/IB"}


def test_one_process_of_eight_does_not_narrow_the_nics():
    # rank 0 alone shows its own NIC; the other seven GPUs' NICs are not in its lines
    text = _log("alltoall", 8, 48.0).replace("via NET/IB/0/GDRDMA", "via NET/IB/3/GDRDMA")
    assert len(net_nics(parse_nccl_debug(text, "a.log"))) == 8


def test_rate_from_the_topology_dump_when_the_capture_has_none():
    text = _log("alltoall", 8, 48.0).replace(
        "gpu-a:77:77 [0] NCCL INFO Using network IB",
        "gpu-a:77:77 [0] NCCL INFO Using network IB\n"
        + "\n".join(
            f"gpu-a:77:90 [0] NCCL INFO + NET[50.0] - NET/{i} ({i:016x}/1/50.000000)" for i in range(8)
        ),
    )
    measurements, logs = read_nccl_text(text, Path("alltoall.log"), "--nccl-log")
    [f] = run_rules(
        Facts(), merge_into(None, measurements), "onprem", [registry()["nccl.collective_vs_fabric"]], logs
    )
    assert f.status == "warn" and any(
        e.path.endswith("net_bw_gb_s.0") and e.value == 50.0 for e in f.evidence
    )


def test_alltoall_capped_at_one_nic_gets_the_channel_settings():
    # 8 x 400 Gb/s for 8 GPUs: 50 GB/s per GPU; an all-to-all over 2 nodes may reach 50 x 15/8 = 93.75
    [f] = _judge("alltoall", 8, 48.0, _facts(8))
    assert f.status == "warn", f
    assert f.recommendation.env == {"NCCL_NCHANNELS_PER_NET_PEER": "4"} and "PXN" in f.recommendation.text
    assert "93.8" in f.recommendation.text and "50.0" in f.recommendation.text
    assert ("bench:nccl_tests_alltoall_busbw.params.gpu" in [f"bench:{e.path}" for e in f.evidence]) and any(
        e.value == "NVIDIA H100 80GB HBM3" for e in f.evidence
    )


def test_all_gather_at_line_rate_is_at_the_fabric_bound():
    [f] = _judge("all_gather", 8, 46.0, _facts(8))
    assert f.status == "pass", f


def test_fewer_nics_than_gpus_is_the_hardware_not_a_setting():
    # 2 NICs for 8 GPUs: 12.5 GB/s each; all-to-all bound 12.5 x 15/8 = 23.4, measured 21
    [f] = _judge("alltoall", 2, 21.0, _facts(2))
    assert f.status == "info" and "hardware" in f.recommendation.text
    assert not f.recommendation.env


def test_no_nic_rate_no_judgement():
    assert _judge("alltoall", 8, 48.0, _facts(8, rate=None)) == []
    assert _judge("alltoall", 8, 48.0, Facts()) == []


def test_all_gather_at_one_nic_with_two_nics_per_gpu_gets_the_settings():
    # 16 x 200 Gb/s for 8 GPUs: 50 GB/s per GPU, but the all-gather stays at one NIC's 25 GB/s
    text = _log("all_gather", 16, 24.0)
    measurements, logs = read_nccl_text(text, Path("ag.log"), "--nccl-log")
    facts = _facts(16, rate=200.0)
    [f] = run_rules(
        facts, merge_into(None, measurements), "onprem", [registry()["nccl.collective_vs_fabric"]], logs
    )
    assert f.status == "warn" and "25.0 GB/s" in f.recommendation.text and "50.0" in f.recommendation.text


def test_a_job_that_disabled_pxn_is_told_to_turn_it_back_on():
    text = _log("alltoall", 8, 48.0).replace(
        "gpu-a:77:77 [0] NCCL INFO Using network IB",
        "gpu-a:77:77 [0] NCCL INFO Using network IB\ngpu-a:77:77 [0] NCCL INFO NCCL_PXN_DISABLE set by environment to 1.",
    )
    measurements, logs = read_nccl_text(text, Path("alltoall.log"), "--nccl-log")
    [f] = run_rules(
        _facts(8), merge_into(None, measurements), "onprem", [registry()["nccl.collective_vs_fabric"]], logs
    )
    assert f.status == "warn" and f.recommendation.env["NCCL_PXN_DISABLE"] == "0"


def test_fewer_nics_than_gpus_alltoall_at_the_share_gets_the_settings():
    # 2 NICs for 8 GPUs: 12.5 GB/s each, below the all-to-all bound of 23.4
    [f] = _judge("alltoall", 2, 12.5, _facts(2))
    assert f.status == "warn" and "12.5 GB/s with 2 NICs" in f.recommendation.text


def test_an_all_reduce_below_the_bound_is_only_information():
    [f] = _judge("all_reduce", 8, 20.0, _facts(8))
    assert f.status == "info" and not f.recommendation.env


def _efa_log(op: str, busbw: float) -> str:
    """Synthetic (built for this test, not a recording): the nccl-tests lines of _log with aws-ofi-nccl's
    lines as the real EFA log in tests/fixtures/evidence/nccl/nccl-issue1597_* prints them."""
    text = _log(op, 8, busbw)
    text = text.replace(
        "gpu-a:77:77 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB "
        "[4]mlx5_4:1/IB [5]mlx5_5:1/IB [6]mlx5_6:1/IB [7]mlx5_7:1/IB ; OOB ib0:10.2.0.1<0>\n"
        "gpu-a:77:77 [0] NCCL INFO Using network IB",
        "gpu-a:77:90 [0] NCCL INFO NET/OFI Selected Provider is efa (found 32 nics)\n"
        "gpu-a:77:90 [0] NCCL INFO Using network Libfabric",
    )
    return text.replace("via NET/IB/0/GDRDMA", "via NET/Libfabric/0/GDRDMA")


def _judge_efa(op: str, busbw: float, instance: str | None):
    measurements, logs = read_nccl_text(_efa_log(op, busbw), Path(f"{op}.log"), "--nccl-log")
    facts = Facts()
    facts.platform.instance_type = instance
    rule = registry()["nccl.collective_vs_fabric"]
    return run_rules(facts, merge_into(None, measurements), "cloud", [rule], logs)


def test_efa_is_the_fabric_of_an_aws_ofi_nccl_log():
    """p5.48xlarge: 32 EFA adapters, 3200 Gb/s together (catalog offers): 100 Gb/s = 12.5 GB/s each, four per
    GPU (50 GB/s). An all-to-all stuck at one adapter's rate is told so; the EFA lines are the evidence."""
    log = parse_nccl_debug(_efa_log("alltoall", 12.0), "a.log")
    assert log.ofi_provider == "efa" and log.ofi_nics == 32 and not net_nics(log)
    [f] = _judge_efa("alltoall", 12.0, "p5.48xlarge")
    assert f.status == "warn", f
    assert "12.5 GB/s with 32 NICs for 8 GPUs" in f.recommendation.text
    paths = {e.path: e.value for e in f.evidence}
    assert paths["nccl_log[alltoall.log].ofi_nics"] == 32 and paths["platform.instance_type"] == "p5.48xlarge"
    [f] = _judge_efa("all_reduce", 45.0, "p5.48xlarge")
    assert f.status == "pass", f  # 45 of 50 GB/s per GPU


def test_efa_without_the_instance_type_is_not_judged():
    assert _judge_efa("alltoall", 12.0, None) == []
    assert _judge_efa("alltoall", 12.0, "no-such-instance") == []


def _judge_ofi(log_name: str, instance: str | None):
    path = Path(__file__).parents[1] / "fixtures" / "evidence" / "nccl" / log_name
    measurements, logs = read_nccl_text(path.read_text(), path, "--evidence")
    facts = Facts()
    facts.platform.instance_type = instance
    return run_rules(facts, merge_into(None, measurements), "cloud", [registry()["nccl.ofi_provider"]], logs)


def test_ofi_provider_counts_efa_devices_against_the_instance_type():
    """nccl#1597's P5en log: 'Selected Provider is efa (found 16 nics)'. The EFA table gives p5en.48xlarge 16
    and p5.48xlarge 32: on a P5en all are found (pass); the same log on a P5 would have lost half (warn)."""
    log = "nccl-issue1597_debug_efa-p5en-16-nics.log"
    [f] = _judge_ofi(log, "p5en.48xlarge")
    assert f.status == "pass", f
    [f] = _judge_ofi(log, "p5.48xlarge")
    assert f.status == "warn", f
    assert "found 16 EFA devices, but a p5.48xlarge has 32" in f.recommendation.text
    paths = {e.path: e.value for e in f.evidence}
    assert paths["catalog:efa_instance_types[p5.48xlarge].efa_interfaces"] == 32
    [f] = _judge_ofi(log, None)  # instance type unknown: the log alone says EFA is used
    assert f.status == "pass", f
    [f] = _judge_ofi(log, "p4d.24xlarge")  # more found than the table has: no claim of a missing device
    assert f.status == "pass", f
