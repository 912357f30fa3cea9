"""The LLM capacity model: KV-cache sizing, decode/prefill times, the batch the targets allow, and the
comparison with published serving benchmarks (pinned, so the model cannot drift silently)."""

from __future__ import annotations

import pytest

from gpuwise.plan import catalog_bridge as cat
from gpuwise.plan.serving.benchmarks import capacity_factors, compare
from gpuwise.plan.serving.capacity import decode_step_s, gpu_figures, llm_capacity
from gpuwise.plan.serving.defaults import ServingDefaults
from gpuwise.plan.serving.workload import InferenceWorkload

LLAMA_8B = {"params": 8.03e9, "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8}


def _wl(tpot_ms=50.0, ttft_ms=1000.0, **model) -> InferenceWorkload:
    return InferenceWorkload.model_validate(
        {
            "kind": "inference",
            "model": {**LLAMA_8B, "prompt_tokens": 1000, "output_tokens": 300, **model},
            "traffic": {"hourly_rps": [1.0] * 24},
            "service": {"ttft_p95_ms": ttft_ms, "tpot_p95_ms": tpot_ms},
        }
    )


def _h100(precision="bf16"):
    return gpu_figures(cat.match_gpu("H100-SXM"), precision, ServingDefaults())


def test_kv_cache_per_token_uses_kv_heads():
    # Llama-3.1-8B: 2 (K,V) × 32 layers × 8 KV heads × 128 dims × 2 bytes = 128 KiB per token
    assert _wl().model.kv_bytes_per_token() == 131072
    assert _wl(kv_precision="fp8").model.kv_bytes_per_token() == 65536


def test_single_stream_decode_reads_the_weights_once():
    g = _h100()
    step = float(decode_step_s(_wl().model, g, 1, 1, 1000))
    weights_time = 8.03e9 * 2 / (g.bandwidth_bytes_s * g.bandwidth_fraction)
    assert weights_time < step < weights_time * 1.05  # plus one sequence's KV cache


def test_tighter_time_per_token_target_means_smaller_batch_and_capacity():
    d, g = ServingDefaults(), _h100("fp8")
    loose = llm_capacity(_wl(tpot_ms=80, precision="fp8"), g, 8, d)
    tight = llm_capacity(_wl(tpot_ms=20, precision="fp8"), g, 8, d)
    assert tight.batch < loose.batch and tight.rps_per_node < loose.rps_per_node
    assert tight.tpot_s <= 0.020 and loose.tpot_s <= 0.080
    assert tight.planned_rps_per_node == pytest.approx(tight.rps_per_node * d.value("max_load_fraction"))


def test_unreachable_target_and_oversized_model_are_infeasible_with_a_reason():
    d, g = ServingDefaults(), _h100()
    too_fast = llm_capacity(_wl(tpot_ms=1), g, 8, d)
    assert not too_fast.feasible and "time per token" in too_fast.reason
    huge = llm_capacity(_wl(params=2e12), g, 8, d)
    assert not huge.feasible and "do not fit" in huge.reason


def test_memory_caps_the_batch_without_targets():
    cap = llm_capacity(_wl(), _h100(), 1, ServingDefaults(), targets=False)
    assert cap.limit == "KV-cache memory" and cap.batch == cap.max_batch_memory


# id -> (metric, published, model's prediction): the README's serving validation table. A change to the model
# or its defaults that moves a prediction by more than 1% fails here and must update both.
PINNED = {
    "nim-70b-h100x2-ttft": ("ttft_ms", 406.77, 322.3),
    "nim-70b-h100x2-itl": ("itl_ms", 18.58, 14.8),
    "trtllm-8b-h100-1000-1000": ("output_tokens_s", 15220, 17912.5),
    "trtllm-8b-h200-2048-2048": ("output_tokens_s", 12194, 14626.0),
    "trtllm-70b-h200-1000-1000": ("output_tokens_s", 2909, 4118.6),
    "trtllm-70b-h100x2-1000-1000": ("output_tokens_s", 4205, 6142.6),
    "vllm-8b-a100-40gb-itl": ("itl_ms", 13.33, 13.02),
}


def test_comparison_with_published_benchmarks_is_pinned():
    checks = {c.id: c for c in compare()}
    assert set(checks) == set(PINNED)
    for key, (metric, published, predicted) in PINNED.items():
        c = checks[key]
        assert (c.metric, c.published) == (metric, published)
        assert c.predicted == pytest.approx(predicted, rel=0.01), key
        assert abs(c.error) < 0.5, f"{key}: the model is {c.error:+.0%} off a published figure"
        assert c.source


def test_plans_correct_capacity_by_the_measured_error():
    checks = compare()
    errs = sorted(c.error for c in checks if c.metric == "output_tokens_s")
    low, typical, high = capacity_factors(checks)
    assert low == pytest.approx(1 / (1 + errs[0])) and high == pytest.approx(1 / (1 + errs[-1]))
    assert typical == pytest.approx(1 / (1 + (errs[1] + errs[2]) / 2))
    assert high < typical < low  # the model is optimistic on every throughput row: all below 1
    assert low < 1.0
