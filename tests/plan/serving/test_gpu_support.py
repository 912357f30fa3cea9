"""Peer links and precision support from the catalog: tensor parallelism over each GPU's real link, and
no precision planned on a GPU whose tensor cores lack it."""

from __future__ import annotations

import dataclasses

import pytest

from gpuwise.catalog.gpu_support import peer_link, precisions
from gpuwise.catalog.gpus import load_gpu_specs
from gpuwise.plan import catalog_bridge as cat
from gpuwise.plan.serving.capacity import gpu_figures, llm_capacity
from gpuwise.plan.serving.defaults import ServingDefaults
from gpuwise.plan.serving.workload import InferenceWorkload

LLAMA_70B = {"params": 70.6e9, "layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 8}


def _wl(precision="fp8", kv="fp8", **model) -> InferenceWorkload:
    return InferenceWorkload.model_validate(
        {
            "kind": "inference",
            "model": {**LLAMA_70B, "precision": precision, "kv_precision": kv, "prompt_tokens": 700,
                      "output_tokens": 300, **model},
            "traffic": {"hourly_rps": [1.0] * 24},
            "service": {"ttft_p99_ms": 2000, "tpot_p99_ms": 200},
        }
    )  # fmt: skip


def _figures(gpu: str, precision="fp8", kv="fp8"):
    return gpu_figures(cat.match_gpu(gpu), precision, ServingDefaults(), kv)


@pytest.mark.parametrize("gpu", ["A100-SXM-80GB", "A100-SXM-40GB", "A10", "V100-SXM2-32GB", "T4"])
def test_fp8_is_never_planned_on_a_gpu_without_fp8_tensor_cores(gpu):
    g = _figures(gpu)
    if isinstance(g, str):  # T4: the catalog lacks its memory bandwidth; then nothing is planned at all
        return
    assert g.weight_precision in ("bf16", "fp16") and g.kv_precision in ("bf16", "fp16")
    assert g.notes and "no fp8 tensor cores" in g.notes[0]
    cap = llm_capacity(_wl(), g, 8, ServingDefaults())
    assert cap.precision != "fp8"


def test_volta_has_no_bf16_and_gets_fp16():
    assert _figures("V100-SXM2-32GB", "bf16", "bf16").weight_precision == "fp16"


@pytest.mark.parametrize("gpu", ["H100-SXM", "H200", "L4", "L40S", "MI300X", "B200"])
def test_fp8_is_kept_where_the_tensor_cores_have_it(gpu):
    g = _figures(gpu)
    assert (g.weight_precision, g.kv_precision, g.notes) == ("fp8", "fp8", ())


def test_every_catalog_gpu_with_an_fp8_peak_is_marked_fp8_and_none_without_is():
    for spec in load_gpu_specs():
        support = precisions(spec.key)
        if support is None:
            continue
        if spec.fp8_tflops:
            assert support.fp8, spec.key
        if not support.fp8:
            assert not spec.fp8_tflops, spec.key


def test_mi300x_tensor_parallelism_uses_infinity_fabric_links_to_each_peer():
    link = peer_link("MI300X")
    assert link.topology == "mesh" and "Infinity Fabric" in link.link and link.bandwidth_gb_s == 64
    g = _figures("MI300X")
    assert g.link_bytes_s(2) == pytest.approx(64e9 * g.link_fraction)
    assert g.link_bytes_s(8) == pytest.approx(7 * 64e9 * g.link_fraction)  # all 7 peer links in a ring of 8
    assert "Infinity Fabric" in g.sources["link"]


def test_nvlink_and_pcie_links_come_from_the_fabric_catalog():
    assert peer_link("H100-SXM").bandwidth_gb_s == 450 and peer_link("H100-SXM").topology == "switch"
    assert peer_link("L40S").bandwidth_gb_s == 31 and "PCIe" in peer_link("L40S").link
    assert _figures("H100-SXM").link_bytes_s(8) == _figures("H100-SXM").link_bytes_s(2)


def test_a_gpu_without_a_known_peer_link_is_served_one_gpu_per_replica_and_says_so():
    # no peer-link or precision row, and no fp8 peak in gpus.csv: fp8 support unknown
    spec = dataclasses.replace(cat.match_gpu("L40S"), key="UNLISTED-GPU", fp8_tflops=None)
    g = gpu_figures(spec, "fp8", ServingDefaults(), "bf16")
    assert g.peer is None and g.sources["link"].startswith("no peer link")
    assert g.weight_precision == "bf16" and "does not say" in g.notes[0]  # unknown fp8 support: not planned
    small = llm_capacity(_wl("bf16", "bf16", params=8e9, layers=32, hidden=4096, heads=32), g, 4,
                         ServingDefaults())  # fmt: skip
    assert small.tp == 1 and any("no peer link" in n for n in small.notes)
    big = llm_capacity(_wl("bf16", "bf16"), g, 8, ServingDefaults())  # 141 GB of weights need tp > 1
    assert not big.feasible and "peer link" in big.reason


def test_no_option_of_the_example_plans_is_planned_in_fp8_on_a_gpu_without_fp8():
    from pathlib import Path

    from gpuwise.plan.serving.planner import make_serving_plan

    examples = Path(__file__).resolve().parents[3] / "examples"
    for name in ("llm-chat-serving.yaml", "llm-70b-serving-p99.yaml"):
        plan = make_serving_plan(examples / name)
        assert plan.workload.model.precision == "fp8"
        fp8 = {h.gpu for h in plan.hardware if h.capacity.precision == "fp8"}
        assert fp8 and all(precisions(g) is not None and precisions(g).fp8 for g in fp8), name
        ampere = [h for h in plan.hardware if h.gpu.startswith("A100") and h.capacity.precision]
        assert ampere and all(h.capacity.precision == "bf16" for h in ampere)
        assert any("no fp8 tensor cores" in n for n in plan.notes)
        # every LLM option's latencies are the model's percentiles at the planned load, within the targets
        s = plan.workload.service
        for h in plan.hardware:
            c = h.capacity
            if c.feasible:
                assert c.ttft_p95_s <= c.ttft_p99_s and c.tpot_p95_s <= c.tpot_p99_s
                if s.tpot_p99_ms:
                    assert c.tpot_p99_s <= s.tpot_p99_ms / 1e3 and c.ttft_p99_s <= s.ttft_p99_ms / 1e3
                if s.tpot_p95_ms:
                    assert c.tpot_p95_s <= s.tpot_p95_ms / 1e3 and c.ttft_p95_s <= s.ttft_p95_ms / 1e3
