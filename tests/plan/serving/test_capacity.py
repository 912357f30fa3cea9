"""The LLM capacity model: KV-cache sizing, decode/prefill times, the batch the targets allow, and the
comparison with published serving benchmarks (pinned, so the model cannot drift silently)."""

from __future__ import annotations

import statistics

import numpy as np
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
    return gpu_figures(cat.match_gpu("H100-SXM"), precision, ServingDefaults(), precision)


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
    assert tight.tpot_p95_s <= 0.020 and loose.tpot_p95_s <= 0.080
    assert tight.tpot_s < tight.tpot_p95_s < tight.tpot_p99_s  # the mean is below the tails
    assert tight.planned_rps_per_node == tight.rps_per_node  # the queueing model sizes it: no fixed headroom


def test_unreachable_target_and_oversized_model_are_infeasible_with_a_reason():
    d, g = ServingDefaults(), _h100()
    too_fast = llm_capacity(_wl(tpot_ms=1), g, 8, d)
    assert not too_fast.feasible and "p95 time per token" in too_fast.reason
    huge = llm_capacity(_wl(params=2e12), g, 8, d)
    assert not huge.feasible and "do not fit" in huge.reason


def test_memory_caps_the_batch_without_targets():
    cap = llm_capacity(_wl(), _h100(), 1, ServingDefaults(), targets=False)
    assert cap.limit == "KV-cache memory" and cap.batch == cap.max_batch_memory


# id -> (metric, published, model's prediction): the validation table of docs/serving-model.md. A change to the
# model or its defaults that moves a prediction by more than 1% fails here and must update both.
PINNED = {
    "nim-70b-h100x2-ttft": ("ttft_ms", 406.77, 346.62),
    "nim-70b-h100x2-itl": ("itl_ms", 18.58, 14.84),
    "trtllm-8b-h200-128-128": ("output_tokens_s", 27911, 32982.1),
    "trtllm-8b-h100-128-128": ("output_tokens_s", 28312, 30874.7),
    "trtllm-8b-h200-128-2048": ("output_tokens_s", 26221, 29394.0),
    "trtllm-8b-h100-128-2048": ("output_tokens_s", 22714, 22610.2),
    "trtllm-8b-h200-128-4096": ("output_tokens_s", 18027, 19579.4),
    "trtllm-8b-h100-128-4096": ("output_tokens_s", 14325, 14253.7),
    "trtllm-8b-h200-500-2000": ("output_tokens_s", 20770, 23525.7),
    "trtllm-8b-h100-500-2000": ("output_tokens_s", 17660, 17930.6),
    "trtllm-8b-h200-1000-1000": ("output_tokens_s", 17744, 18961.4),
    "trtllm-8b-h100-1000-1000": ("output_tokens_s", 15220, 15115.9),
    "trtllm-8b-h200-1000-2000": ("output_tokens_s", 16828, 18362.1),
    "trtllm-8b-h100-1000-2000": ("output_tokens_s", 13899, 13867.3),
    "trtllm-8b-h200-2048-128": ("output_tokens_s", 3538, 3711.9),
    "trtllm-8b-h100-2048-128": ("output_tokens_s", 3450, 3434.0),
    "trtllm-8b-h200-2048-2048": ("output_tokens_s", 12194, 12549.7),
    "trtllm-8b-h100-2048-2048": ("output_tokens_s", 9305, 9368.8),
    "trtllm-8b-h200-5000-500": ("output_tokens_s", 3902, 4102.2),
    "trtllm-8b-h100-5000-500": ("output_tokens_s", 3459, 3397.6),
    "trtllm-8b-h200-20000-2000": ("output_tokens_s", 1804, 1854.0),
    "trtllm-8b-h100-20000-2000": ("output_tokens_s", 1351, 1305.8),
    "trtllm-70b-h200-128-128": ("output_tokens_s", 3803, 4066.7),
    "trtllm-70b-h100x2-128-128": ("output_tokens_s", 6378, 6738.8),
    "trtllm-70b-h200-128-2048": ("output_tokens_s", 4336, 5701.2),
    "trtllm-70b-h100x2-128-2048": ("output_tokens_s", 6651, 8860.2),
    "trtllm-70b-h200-128-4096": ("output_tokens_s", 2872, 3422.9),
    "trtllm-70b-h100x2-128-4096": ("output_tokens_s", 4199, 4975.3),
    "trtllm-70b-h200-500-2000": ("output_tokens_s", 3666, 4703.9),
    "trtllm-70b-h100x2-500-2000": ("output_tokens_s", 5222, 6913.5),
    "trtllm-70b-h200-1000-1000": ("output_tokens_s", 2909, 3309.2),
    "trtllm-70b-h100x2-1000-1000": ("output_tokens_s", 4205, 5319.2),
    "trtllm-70b-h200-1000-2000": ("output_tokens_s", 2994, 3530.4),
    "trtllm-70b-h100x2-1000-2000": ("output_tokens_s", 4146, 5194.6),
    "trtllm-70b-h200-2048-128": ("output_tokens_s", 442, 469.9),
    "trtllm-70b-h100x2-2048-128": ("output_tokens_s", 762, 807.2),
    "trtllm-70b-h200-2048-2048": ("output_tokens_s", 2003, 2269.8),
    "trtllm-70b-h100x2-2048-2048": ("output_tokens_s", 3082, 3420.4),
    "trtllm-70b-h200-5000-500": ("output_tokens_s", 566, 589.9),
    "trtllm-70b-h100x2-5000-500": ("output_tokens_s", 898, 973.4),
    "trtllm-70b-h200-20000-2000": ("output_tokens_s", 283, 311.0),
    "trtllm-70b-h100x2-20000-2000": ("output_tokens_s", 437, 486.7),
    "vllm-8b-a100-40gb-itl": ("itl_ms", 13.33, 13.02),
    "mlperf41-70b-h100x8-server": ("server_tokens_s", 21605.79, 15865.2),
    "mlperf41-70b-h200x8-server": ("server_tokens_s", 29228.22, 18934.2),
    "mlperf41-70b-mi300xx8-server": ("server_tokens_s", 21028.23, 16081.7),
    "mlperf41-70b-mi300xx1-server": ("server_tokens_s", 2520.27, 2010.2),
    "mlperf41-70b-l40sx4-server": ("server_tokens_s", 1469.19, 1517.5),
}
# Held out: MLPerf Inference v5.0 llama2-70b Server/Interactive results added after the model was built,
# scored as it is (no term chosen, no range set on them): (metric, published, predicted).
HELD_OUT = {
    "mlperf50-70b-h100x8-server": ("server_tokens_s", 31106.28, 15865.2),
    "mlperf50-70b-h200x8-server": ("server_tokens_s", 33071.46, 18934.2),
    "mlperf50-70b-h200x8-interactive": ("server_tokens_s", 19424.25, 14255.6),
    "mlperf50-70b-b200x1-server": ("server_tokens_s", 12078.4, 4998.8),
    "mlperf50-70b-b200x8-server": ("server_tokens_s", 98443.3, 39990.3),
    "mlperf50-70b-b200x8-interactive": ("server_tokens_s", 59409.25, 35895.6),
    "mlperf50-70b-h200x8-server-google": ("server_tokens_s", 31390.23, 18934.2),
    "mlperf50-70b-b200x8-server-google": ("server_tokens_s", 92338.7, 39990.3),
}
WITHIN = 0.25  # the tolerance the validation table is judged at


def test_comparison_with_published_benchmarks_is_pinned():
    checks = {c.id: c for c in compare() if not c.held_out}
    assert set(checks) == set(PINNED)
    for key, (metric, published, predicted) in PINNED.items():
        c = checks[key]
        assert (c.metric, c.published) == (metric, published)
        assert c.predicted == pytest.approx(predicted, rel=0.01), key
        assert abs(c.error) < 0.5, f"{key}: the model is {c.error:+.0%} off a published figure"
        assert c.source


def test_share_of_the_validation_table_within_tolerance_is_pinned():
    """40 of 48 published points within 25% (docs/serving-model.md): outside are six TensorRT-LLM offline
    Llama 3.3 70B rows with long outputs (+25% to +33%, the model optimistic) and NVIDIA's two MLPerf Server
    rows at the unverified 684-token mean prompt (-27%, -35%)."""
    checks = [c for c in compare() if not c.held_out]
    outside = sorted(c.id for c in checks if abs(c.error) > WITHIN)
    assert outside == [
        "mlperf41-70b-h100x8-server",
        "mlperf41-70b-h200x8-server",
        "trtllm-70b-h100x2-1000-1000",
        "trtllm-70b-h100x2-1000-2000",
        "trtllm-70b-h100x2-128-2048",
        "trtllm-70b-h100x2-500-2000",
        "trtllm-70b-h200-128-2048",
        "trtllm-70b-h200-500-2000",
    ]
    assert len(checks) - len(outside) == 40 and len(checks) == 48
    offline = [c for c in checks if c.metric == "output_tokens_s"]
    assert len(offline) == 40 and sum(abs(c.error) <= WITHIN for c in offline) == 34


def test_every_throughput_point_lies_inside_the_planned_range():
    """The capacity range plans show is capacity ÷ (1 + the smallest / largest throughput error), so each
    published throughput lies between the low and high capacity by construction; this checks it holds."""
    checks = [c for c in compare() if c.metric in ("output_tokens_s", "server_tokens_s") and not c.held_out]
    low, _typical, high = capacity_factors(compare())
    for c in checks:
        assert c.predicted * high * (1 - 1e-9) <= c.published <= c.predicted * low * (1 + 1e-9), c.id


def test_held_out_results_are_scored_as_the_model_stands():
    """0 of 8 held-out MLPerf v5.0 points within 25%, all pessimistic (docs/serving-model.md, held-out
    table): the same H100 and H200 nodes served 44% and 13% more tokens/s in v5.0 than in v4.1 (software),
    and the B200 rows may be FP4 engines, which the model has no path for. Pinned so a change shows."""
    checks = {c.id: c for c in compare() if c.held_out}
    assert set(checks) == set(HELD_OUT)
    for key, (metric, published, predicted) in HELD_OUT.items():
        c = checks[key]
        assert (c.metric, c.published) == (metric, published) and c.source
        assert c.predicted == pytest.approx(predicted, rel=0.01), key
    assert sum(abs(c.error) <= WITHIN for c in checks.values()) == 0
    assert all(c.error < 0 for c in checks.values())
    low, _typical, _high = capacity_factors(compare())
    inside = sorted(k for k, c in checks.items() if c.published <= c.predicted * low * (1 + 1e-9))
    assert inside == ["mlperf50-70b-h200x8-interactive"]


def test_held_out_rows_do_not_move_the_capacity_range():
    fitted = [c for c in compare() if not c.held_out]
    assert capacity_factors(compare()) == capacity_factors(fitted)


def test_plans_correct_capacity_by_the_measured_error():
    checks = [c for c in compare() if not c.held_out]
    errs = sorted(c.error for c in checks if c.metric in ("output_tokens_s", "server_tokens_s"))
    low, typical, high = capacity_factors(checks)
    assert low == pytest.approx(1 / (1 + errs[0])) and high == pytest.approx(1 / (1 + errs[-1]))
    assert typical == pytest.approx(1 / (1 + statistics.median(errs)))
    assert high < typical < low
    assert high < 1.0 < low  # optimistic on some rows, pessimistic on others


def test_a_tiny_model_with_a_huge_kv_cache_is_evaluated_on_a_bounded_grid():
    from gpuwise.plan.serving.capacity import GRID_POINTS, batch_grid

    wl = _wl(params=1e8, layers=1, hidden=64, heads=1, kv_heads=1, prompt_tokens=10, output_tokens=10)
    cap = llm_capacity(wl, _h100(), 8, ServingDefaults())
    assert cap.max_batch_memory > 1_000_000 and cap.feasible
    grid = batch_grid(cap.max_batch_memory)
    assert len(grid) <= GRID_POINTS and grid[0] == 1 and grid[-1] == cap.max_batch_memory
    assert np.all(np.diff(grid) > 0) and np.all(np.diff(grid) <= np.maximum(1.0, 0.01 * grid[:-1]))
