"""Scaling-model inputs: gradient all-reduce dtype, DDP bucket defaults, straggler and network defaults."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from gpuwise.plan.defaults import PlanDefaults
from gpuwise.plan.options import achieved_range, network
from gpuwise.plan.perf import WorkloadNumbers
from gpuwise.plan.workload import load_workload

ROOT = Path(__file__).resolve().parents[2]
LLM7B = ROOT / "examples" / "llm-7b-pretrain-1t.yaml"


def test_autocast_ddp_reduces_fp32_gradients_and_a_hook_halves_them(tmp_path):
    wl = load_workload(LLM7B)
    assert wl.training.precision == "bf16"
    w = WorkloadNumbers.from_workload(wl)
    assert w.reduce_bytes == 4.0 and w.grad_bytes == 2.0  # compute in bf16, all-reduce in fp32
    assert w.bucket_bytes == 25 * 2**20 and w.first_bucket_bytes == 2**20  # DDP's MiB, not MB
    text = LLM7B.read_text().replace("precision: bf16", "precision: bf16\n  grad_reduce_dtype: bf16")
    path = tmp_path / "w.yaml"
    path.write_text(text)
    assert WorkloadNumbers.from_workload(load_workload(path)).reduce_bytes == 2.0


def test_straggler_default_is_small_sourced_and_its_low_end_larger():
    d = PlanDefaults()
    cv, low_end = d.value("stragglers.compute_cv"), d.value("stragglers.compute_cv_low_end")
    assert 0 < cv < low_end <= 0.1
    assert "fit" in d.source("stragglers.compute_cv") and "https://" in d.source("stragglers.compute_cv")
    for key in ("stragglers.network_cv_rdma", "stragglers.network_cv_ethernet"):
        assert d.value(key) == 0.0 and "calibrat" in d.source(key)


def test_tcp_and_rdma_ranges_are_ordered_and_sourced():
    d = PlanDefaults()
    rdma = achieved_range(d, rdma=True)
    assert rdma[0] < rdma[1] < rdma[2] <= 1.0
    for end in ("low", "typical", "high"):
        assert d.source(f"network_achieved_fraction.rdma.{end}").startswith("https://")
    tcpx = [d.value(f"network_achieved_fraction.tcpx.{end}") for end in ("low", "typical", "high")]
    assert tcpx[0] < tcpx[1] < tcpx[2] <= 1.0  # GPUDirect-TCPX(O): measured, not the socket model
    for end in ("low", "typical", "high"):
        assert d.source(f"network_achieved_fraction.tcpx.{end}").startswith("https://github.com/")
    for key in d.data["tcp_sockets"]:
        if key != "providers":
            assert "https://" in d.source(f"tcp_sockets.{key}") or "assumption" in d.source(
                f"tcp_sockets.{key}"
            )
    # TCP: the fraction falls with the line rate (flow and host ceilings), ordered low < typical <= high
    for gbps in (25.0, 100.0):
        tcp = achieved_range(d, rdma=False, gbps=gbps, provider="aws")
        assert tcp[0] < tcp[1] <= tcp[2] <= 1.0
    assert achieved_range(d, False, 100.0, "aws")[2] < achieved_range(d, False, 25.0, "aws")[2]
    link = network(100.0, None, d, rdma=False, provider="aws")
    assert link.bytes_s_low < link.bytes_s <= link.bytes_s_high
    assert link.bytes_s == pytest.approx(100e9 / 8 * achieved_range(d, False, 100.0, "aws")[1])
    # an override moves the model and the plan says so
    d2 = d.with_overrides({"tcp_sockets.host_cap_gbps": 30.0})
    assert network(100.0, None, d2, rdma=False, provider="aws").bytes_s == pytest.approx(30e9 / 8)
    # RDMA without GPUDirect RDMA: the typical value is the range's low end
    assert network(200.0, None, d, rdma=True, gpudirect=False).bytes_s == pytest.approx(200e9 / 8 * rdma[0])


def test_published_comparison_runs_and_computes_published_efficiency():
    spec = importlib.util.spec_from_file_location(
        "vps", ROOT / "benchmarks" / "validate_published_scaling.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    import yaml

    cases = yaml.safe_load(mod.DATA.read_text())["cases"]
    assert len(cases) >= 10 and all(c["source"].startswith("https://") for c in cases)
    r = mod.predict_case(cases[0])
    assert r["published"][0] == pytest.approx(2632.95 / (2 * 2697.29))
    for i in range(len(r["nodes"])):
        assert 0 < r["low"][i] <= r["typical"][i] <= r["high"][i] <= 1.0


def test_plan_says_what_tcp_socket_tuning_is_worth():
    from types import SimpleNamespace

    import numpy as np

    from gpuwise.plan import catalog_bridge as cat
    from gpuwise.plan.options import Hardware, node_numbers
    from gpuwise.plan.perf import OptionArrays, evaluate
    from gpuwise.plan.planner import tcp_tuning_note

    d = PlanDefaults()
    wl = load_workload(ROOT / "examples" / "resnet50-imagenet.yaml")
    hw = Hardware("A100-SXM-80GB", cat.match_gpu("A100-SXM-80GB"), 8)
    nets = [network(25.0, None, d, rdma=False, provider="aws"), network(1600.0, "ib-hdr", d)]
    arrays = OptionArrays.stack([node_numbers(wl, hw, d, None, n, "local-nvme", 0.0, {}) for n in nets])
    w = WorkloadNumbers.from_workload(wl, d.value("compute.recompute_factor"), d)
    nodes = np.array([1.0, 4.0, 16.0])
    feasible = evaluate(w, arrays, nodes).infeasible == 0
    rows = [SimpleNamespace(tcp=True, label="vpc-25g"), SimpleNamespace(tcp=False, label="ib")]
    note = tcp_tuning_note(rows, w, arrays, nodes, feasible)
    assert note and "vpc-25g" in note and "gpuwise tune" in note
    # only RDMA options: nothing to tune on sockets
    assert (
        tcp_tuning_note([rows[1]], w, OptionArrays.stack([arrays_row(arrays, 1)]), nodes, feasible[1:])
        is None
    )


def test_runtime_sets_buckets_coordination_and_sharding(tmp_path):
    d = PlanDefaults()
    base = LLM7B.read_text()
    out = {}
    for runtime in ("ddp", "horovod", "fsdp"):
        path = tmp_path / f"{runtime}.yaml"
        path.write_text(base.replace("precision: bf16", f"precision: bf16\n  runtime: {runtime}"))
        out[runtime] = WorkloadNumbers.from_workload(load_workload(path), 4.0 / 3.0, d)
    assert out["ddp"].sync_wait_s == 0.0 and out["ddp"].bucket_bytes == 25 * 2**20
    assert out["horovod"].bucket_bytes == out["horovod"].first_bucket_bytes == 64 * 2**20
    assert out["horovod"].sync_wait_s > d.value("runtimes.horovod.cycle_ms") * 1e-3
    assert out["fsdp"].zero_stage == 3


def arrays_row(arrays, i):
    from dataclasses import fields

    from gpuwise.plan.perf import NodeNumbers

    return NodeNumbers(**{f.name: float(getattr(arrays, f.name)[i]) for f in fields(NodeNumbers)})
