"""End to end: examples produce plans with reasons; options, calibration, currencies, CLI and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuwise.cli import app
from gpuwise.errors import DataValidationError, UserInputError
from gpuwise.plan.export import plan_to_json
from gpuwise.plan.planner import make_plan, parse_sweep

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LLM7B = EXAMPLES / "llm-7b-pretrain-1t.yaml"
OPTIONS = EXAMPLES / "plan-options.yaml"


@pytest.mark.parametrize(
    "name", ["llm-7b-pretrain-1t.yaml", "resnet50-imagenet.yaml", "llm-13b-finetune.yaml"]
)
def test_examples_give_a_decision_with_reasons(name):
    plan = make_plan(EXAMPLES / name, OPTIONS)
    d = plan.decision
    assert d.verdict in ("cloud", "build", "hybrid")
    assert len(d.reasons) >= 3 and d.flips
    assert any(r.favours == "cloud" for r in d.reasons) or any(r.favours == "build" for r in d.reasons)
    doc = plan_to_json(plan)
    assert doc["schema"] == "gpuwise-plan/1"
    json.dumps(doc, allow_nan=False)  # no NaN/inf leaks into the document
    chosen = [o for o in doc["options"] if o["chosen_nodes"]]
    assert chosen and all(o["per_nodes"][0]["nodes"] == 1 for o in chosen)


def test_steady_pretraining_favours_owning_and_bursty_finetune_favours_cloud():
    steady = make_plan(LLM7B, OPTIONS).decision
    assert steady.verdict in ("build", "hybrid")
    assert steady.break_even_utilisation is not None and steady.break_even_utilisation < 0.8
    bursty = make_plan(EXAMPLES / "llm-13b-finetune.yaml", OPTIONS).decision
    assert bursty.verdict == "cloud"


def _variant(tmp_path: Path, **org) -> Path:
    text = LLM7B.read_text()
    for key, value in org.items():
        text = text.replace(f"  {key}:", f"  {key}: {value}  #", 1)
    p = tmp_path / "w.yaml"
    p.write_text(text)
    return p


def test_low_utilisation_flips_to_cloud(tmp_path):
    plan = make_plan(_variant(tmp_path, utilisation=0.05, ops_team="false", horizon_years=1), OPTIONS)
    assert plan.decision.verdict == "cloud"


def test_on_prem_residency_forces_build(tmp_path):
    plan = make_plan(_variant(tmp_path, data_residency="on-prem"), OPTIONS)
    assert plan.decision.verdict == "build"
    assert "residency" in plan.decision.summary


def test_cost_scales_with_price(tmp_path):
    base = make_plan(LLM7B, OPTIONS)
    # An hourly-billed row (capacity blocks bill whole days: tests/plan/test_commitments.py).
    o = next(
        i
        for i, r in enumerate(base.rows)
        if r.kind == "cloud" and base.chosen[i] >= 0 and r.pricing != "capacity_block"
    )
    k = base.chosen[o]
    expected = base.rows[o].node_hour_price * base.nodes[k] * base.perf.time_to_train_s[o, k] / 3600
    assert base.run_cost[o, k] == pytest.approx(expected)


def test_currencies_kept_apart_without_rate(tmp_path):
    opts = tmp_path / "o.yaml"
    opts.write_text(
        "cloud:\n  include: false\nonprem:\n  - name: cny-build\n    gpu: H100-SXM\n    fabric: "
        "ib-ndr\n    costs: {currency: CNY, server_price_per_node: 2200000}\n  - name: "
        "usd-build\n    gpu: H100-SXM\n    fabric: ib-ndr\n"
    )
    opts.write_text(opts.read_text().replace("CNY", "GBP"))  # CNY has a default rate; GBP has none
    plan = make_plan(LLM7B, opts)
    assert any("GBP" in n and "left out of the decision" in n for n in plan.notes)
    assert plan.rows[plan.decision.best_onprem].currency == "USD"
    opts.write_text(opts.read_text() + "exchange_rates: {GBP: 1.3}\n")
    plan = make_plan(LLM7B, opts)
    gbp = next(i for i, r in enumerate(plan.rows) if r.currency == "GBP")
    assert plan.convertible[gbp] and not any("left out" in n for n in plan.notes)


def test_bad_options_file_has_line(tmp_path):
    opts = tmp_path / "o.yaml"
    opts.write_text("cloud:\n  pricing: [on_demand, spott]\n")
    with pytest.raises(DataValidationError) as err:
        make_plan(LLM7B, opts)
    assert err.value.line == 2 and "spot" in str(err.value)
    opts.write_text("onprem:\n  - name: x\n    gpu: NoSuchGPU-9000\n")
    with pytest.raises(DataValidationError, match="not in the catalog"):
        make_plan(LLM7B, opts)


def test_missing_cost_default_names_the_field(tmp_path):
    opts = tmp_path / "o.yaml"
    opts.write_text("cloud: {include: false}\nonprem:\n  - name: h200\n    gpu: H200\n    fabric: ib-ndr\n")
    with pytest.raises(DataValidationError, match="costs.server_price_per_node"):
        make_plan(LLM7B, opts)


def test_calibration_changes_mfu_and_is_reported(tmp_path):
    bench = {
        "schema": "gpuwise-bench/1",
        "environment": {"gpu_name": "NVIDIA A100-SXM4-80GB"},
        "results": [
            {
                "name": "matmul_bf16",
                "layer": "compute",
                "value": 200.0,
                "unit": "TFLOP/s",
                "peak": 312.0,
                "percent_of_peak": 64.1,
            },
            {
                "name": "allreduce_busbw",
                "layer": "collective",
                "value": 150.0,
                "unit": "GB/s",
                "params": {"backend": "nccl", "nodes": 1},
            },
            {
                "name": "fio_randread_4k",
                "layer": "storage",
                "value": 1.0,
                "unit": "IOPS",
                "status": "skipped",
            },
        ],
    }
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(bench))
    plan = make_plan(LLM7B, OPTIONS, path)
    a100 = next(r for r in plan.rows if r.kind == "onprem" and "A100" in r.gpu_name)
    h100 = next(r for r in plan.rows if r.kind == "onprem" and "H100" in r.gpu_name)
    assert a100.numbers.mfu == pytest.approx(0.641 * 0.57)
    assert a100.numbers.intra_bytes_s == pytest.approx(150e9)
    assert "calibrated" in a100.provenance["mfu"] and "calibrated" not in h100.provenance["mfu"]
    assert len(plan.calibration.used) == 2 and any("fio" in i for i in plan.calibration.ignored)


def test_calibration_rejects_non_bench_json(tmp_path):
    path = tmp_path / "bench.json"
    path.write_text('{"schema": "something-else"}')
    with pytest.raises(DataValidationError, match="gpuwise-bench/1"):
        make_plan(LLM7B, OPTIONS, path)
    path.write_text("{not json")
    with pytest.raises(DataValidationError, match="JSON"):
        make_plan(LLM7B, OPTIONS, path)


def test_parse_sweep():
    assert parse_sweep("nodes=8,1,2") == [1, 2, 8]
    assert parse_sweep(None) == [1, 2, 4, 8, 16, 32]
    for bad in ("gpus=1,2", "nodes=a,b", "nodes=0"):
        with pytest.raises(UserInputError):
            parse_sweep(bad)


def test_cli_json_and_table(tmp_path):
    runner = CliRunner()
    out = tmp_path / "plan.json"
    res = runner.invoke(
        app,
        ["plan", str(LLM7B), "--options", str(OPTIONS), "--sweep", "nodes=1,4,16", "--json", "-o", str(out)],
    )
    assert res.exit_code == 0, res.output
    assert res.stdout == ""  # -o writes the chosen format instead of printing it
    doc = json.loads(out.read_text())
    assert doc["schema"] == "gpuwise-plan/1" and doc["nodes"] == [1, 4, 16]
    res = runner.invoke(app, ["plan", str(LLM7B), "--options", str(OPTIONS)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "Recommendation" in res.stdout and "What would flip it" in res.stdout


def test_cli_bad_file_is_a_clean_error(tmp_path):
    import subprocess
    import sys

    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "model:\n  params: 1e9\n  seq_len: 10\ntraining:\n  tokens: 5\n  global_batch: 1\n  pararelism: "
        "{}\ndata: {size_gb: 1}\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "gpuwise.cli", "plan", str(bad)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 3
    assert f"{bad}:7:" in proc.stderr and "did you mean 'parallelism'" in proc.stderr
    assert "Traceback" not in proc.stderr


def _bench(tmp_path, env, results):
    path = tmp_path / "bench.json"
    path.write_text(json.dumps({"schema": "gpuwise-bench/1", "environment": env, "results": results}))
    return path


def test_training_mfu_from_bench_shape_wins(tmp_path):
    # The shape `gpuwise bench` writes: environment.gpus / catalog_gpu, train_<kind>_<dtype> with extra.mfu.
    path = _bench(
        tmp_path,
        {"gpus": ["NVIDIA H100 80GB HBM3"], "catalog_gpu": "H100-SXM"},
        [
            {
                "name": "train_transformer_bf16",
                "layer": "training",
                "value": 400.0,
                "unit": "TFLOP/s",
                "peak": 989.0,
                "extra": {"mfu": 0.4045},
            },
            {
                "name": "train_cnn_bf16",
                "layer": "training",
                "value": 100.0,
                "unit": "TFLOP/s",
                "extra": {"mfu": 0.1},
            },
            {
                "name": "allreduce_busbw",
                "layer": "collective",
                "value": 80.0,
                "unit": "GB/s",
                "params": {"nodes": 2},
            },
        ],
    )
    plan = make_plan(LLM7B, OPTIONS, path)
    h100 = next(r for r in plan.rows if r.kind == "onprem" and "H100" in r.gpu_name)
    assert h100.numbers.mfu == pytest.approx(0.4045)
    assert any("train_cnn_bf16" in i for i in plan.calibration.ignored)
    # across nodes, but without the per-size table a latency/bandwidth fit needs
    assert any("usable sizes" in i for i in plan.calibration.ignored) and plan.calibration.network is None


def test_cpu_only_bench_applies_nothing(tmp_path):
    path = _bench(
        tmp_path,
        {"cpu_model": "x"},
        [
            {
                "name": "matmul_bf16",
                "layer": "compute",
                "value": 0.1,
                "unit": "TFLOP/s",
                "percent_of_peak": 36.0,
            }
        ],
    )
    plan = make_plan(LLM7B, OPTIONS, path)
    assert plan.calibration.used == [] and "names no GPU" in plan.calibration.ignored[0]
    assert not any("calibrated" in r.provenance["mfu"] for r in plan.rows)


# Recorded by this project: `gpuwise bench --only compute,training --json` (quick mode) on one NVIDIA H200,
# torch 2.11.0+cu130, 2026-11-29. It contains an "invalid" result (train_cnn_fp32 at 105% of the fp32 peak).
H200_BENCH = Path(__file__).parent / "data" / "bench_h200_quick.json"


def test_calibration_from_a_real_h200_bench_report():
    plan = make_plan(LLM7B, OPTIONS, H200_BENCH)
    cal = plan.calibration
    assert cal.gpu_name == "H200"
    assert cal.training_mfu == pytest.approx(0.24575, abs=1e-4)  # train_transformer_bf16 extra.mfu
    assert cal.mamf_fraction == pytest.approx(0.6867, abs=1e-3)  # matmul_bf16 percent_of_peak
    assert any("train_cnn_fp32: status invalid" in i for i in cal.ignored)
    h200 = [r for r in plan.rows if r.gpu_name == "H200"]
    others = [r for r in plan.rows if r.gpu_name != "H200"]
    assert h200 and all(r.numbers.mfu == pytest.approx(cal.training_mfu) for r in h200)
    assert not any("calibrated" in r.provenance["mfu"] for r in others)


def test_break_even_per_cloud_option_in_json(tmp_path):
    # Reserved capacity is an option for this 38-day run only when it is reused afterwards.
    reused = tmp_path / "reused.yaml"
    reused.write_text(LLM7B.read_text() + "  reuse_capacity: true\n")  # org: is the file's last section
    doc = plan_to_json(make_plan(reused, OPTIONS))
    per = doc["decision"]["break_even_per_cloud_option"]
    reserved = [v for k, v in per.items() if "reserved" in k]
    payg = [v for k, v in per.items() if "on_demand" in k]
    assert reserved and all(
        v["break_even_utilisation"] is None and v["break_even_months"] > 0 for v in reserved
    )
    assert payg and all(0 < v["break_even_utilisation"] < 1 for v in payg)
