"""Region and export constraints: the org's jurisdiction excludes builds and offers, with sourced reasons."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuwise.catalog import gpus
from gpuwise.errors import DataValidationError, UserInputError
from gpuwise.plan import region
from gpuwise.plan.export import plan_to_json
from gpuwise.plan.planner import make_plan

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LLM7B = EXAMPLES / "llm-7b-pretrain-1t.yaml"


def _workload(tmp_path: Path, **org) -> Path:
    """The 7B example with org keys set (an existing key is replaced, a new one added under org:)."""
    lines = LLM7B.read_text().splitlines()
    start = lines.index("org:")
    for key, value in org.items():
        found = [i for i in range(start + 1, len(lines)) if lines[i].startswith(f"  {key}:")]
        if found:
            lines[found[0]] = f"  {key}: {value}"
        else:
            lines.insert(start + 1, f"  {key}: {value}")
    out = tmp_path / "w.yaml"
    out.write_text("\n".join(lines) + "\n")
    return out


def _options(tmp_path: Path, body: str, name: str = "o.yaml") -> Path:
    out = tmp_path / name
    out.write_text(body)
    return out


BUILDS = (
    "onprem:\n"
    "  - {name: h100-build, gpu: H100-SXM, fabric: ib-ndr}\n"
    "  - {name: h20-build, gpu: H20, fabric: ib-ndr, costs: {server_price_per_node: 1500000, currency: CNY}}\n"
)


def test_china_org_cannot_buy_h100_but_can_buy_h20(tmp_path):
    opts = _options(tmp_path, "cloud: {include: false}\n" + BUILDS)
    plan = make_plan(_workload(tmp_path, jurisdiction="cn"), opts)
    names = [r.label for r in plan.rows]
    assert not any("h100-build" in n for n in names) and any("h20-build" in n for n in names)
    (ex,) = plan.excluded
    assert ex.kind == "build" and ex.name == "h100-build" and ex.rule == "export-control:us-bis-3a090"
    assert "federalregister.gov" in ex.source and "3A090" in ex.reason and "H100-SXM" in ex.detail
    doc = plan_to_json(plan)
    assert doc["excluded"][0]["rule"] == "export-control:us-bis-3a090"
    json.dumps(doc, allow_nan=False)


def test_same_builds_without_jurisdiction_exclude_nothing(tmp_path):
    opts = _options(tmp_path, "cloud: {include: false}\n" + BUILDS)
    plan = make_plan(LLM7B, opts)
    assert plan.excluded == [] and plan_to_json(plan)["excluded"] == []
    assert len([r for r in plan.rows if r.kind == "onprem"]) == 2


def test_us_org_keeps_every_build(tmp_path):
    opts = _options(tmp_path, "cloud: {include: false}\n" + BUILDS)
    assert make_plan(_workload(tmp_path, jurisdiction="us"), opts).excluded == []


def test_residency_region_keeps_only_offers_in_the_jurisdiction(tmp_path):
    opts = _options(tmp_path, "cloud: {providers: [aws, tencent], pricing: [on_demand]}\nonprem: []\n")
    cn = make_plan(_workload(tmp_path, jurisdiction="cn", data_residency="region"), opts)
    assert cn.rows and all(r.provider == "tencent" for r in cn.rows)  # mainland China list prices
    assert any(e.name.startswith("aws p5.48xlarge") and "United States" in e.detail for e in cn.excluded)
    only_aws = _options(tmp_path, "cloud: {providers: [aws], pricing: [on_demand]}\nonprem: []\n", "aws.yaml")
    with pytest.raises(UserInputError) as err:  # every AWS offer is outside mainland China
        make_plan(_workload(tmp_path, jurisdiction="cn", data_residency="region"), only_aws)
    assert "excluded" in str(err.value) and "data-residency" in str(err.value)
    plan = make_plan(_workload(tmp_path, jurisdiction="us", data_residency="region"), opts)
    assert plan.rows and all(r.region and r.region.startswith("us-") for r in plan.rows)
    tencent = [e for e in plan.excluded if e.name.startswith("tencent")]
    assert tencent and all(e.rule == "data-residency" for e in tencent)
    assert all("Mainland China" in e.detail and "qcloud-documents" in e.source for e in tencent)


def test_offers_without_a_region_cannot_prove_residency(tmp_path):
    opts = _options(tmp_path, "cloud: {providers: [lambda], pricing: [on_demand]}\n" + BUILDS)
    plan = make_plan(_workload(tmp_path, jurisdiction="us", data_residency="region"), opts)
    lam = [e for e in plan.excluded if e.kind == "offer"]
    assert lam and all(e.detail == "no region listed" and e.source == "" for e in lam)
    assert not any(r.provider == "lambda" for r in plan.rows)
    # Without residency the same org keeps them: export rules concern hardware, not renting.
    kept = make_plan(_workload(tmp_path, jurisdiction="cn"), opts)
    assert any(r.provider == "lambda" for r in kept.rows)


def test_plan_text_lists_the_exclusions(tmp_path):
    from gpuwise.report.views.plan import plan_view

    opts = _options(tmp_path, "cloud: {include: false}\n" + BUILDS)
    doc = plan_view(make_plan(_workload(tmp_path, jurisdiction="cn"), opts))
    text = json.dumps(doc.data)
    assert "h100-build" in text
    titles = [getattr(b, "title", None) or "" for b in doc.blocks]
    assert any("cannot use" in t for t in titles)


def test_unknown_jurisdiction_is_a_file_line_error_with_did_you_mean(tmp_path):
    with pytest.raises(DataValidationError) as err:
        make_plan(_workload(tmp_path, jurisdiction="chn"), None)
    assert err.value.line is not None and "'cn'" in str(err.value)


def test_gpu_class_matching_never_confuses_neighbours():
    assert region.gpu_in_class("A100-SXM-80GB", "A100") and region.gpu_in_class("H20", "H20")
    assert not region.gpu_in_class("A10", "A100") and not region.gpu_in_class("GH200", "H200")
    assert not region.gpu_in_class("H20", "H200") and not region.gpu_in_class("H200", "H20")


def test_controlled_classes_are_above_the_3a090_threshold_and_china_parts_below():
    # ECCN 3A090.a: total processing performance (TPP = dense TFLOPS x bit length) >= 4800.
    (rule,) = region.load_rules().export_rules
    for spec in gpus.load_gpu_specs():
        tflops16 = spec.peak_tflops("fp16") or spec.peak_tflops("bf16")
        if not tflops16:
            continue
        controlled = any(region.gpu_in_class(spec.key, c) for c in rule.gpu_classes)
        if controlled:
            assert tflops16 * 16 >= 4800, spec.key
        if spec.key in ("H20", "L20"):
            assert not controlled and tflops16 * 16 < 4800


def test_every_region_pattern_names_a_known_jurisdiction_and_source():
    rules = region.load_rules()
    for pattern, code, source in rules.regions:
        assert code in rules.jurisdictions and source.startswith(("Tencent", "AWS")), pattern
    assert rules.jurisdiction_of("ap-guangzhou-3")[0] == "cn"
    assert rules.jurisdiction_of("ap-hongkong-2")[0] == "hk"
    assert rules.jurisdiction_of("us-east-2")[0] == "us" and rules.jurisdiction_of(None) == (None, "")
    assert rules.jurisdiction_of("cn-shanghai")[0] == "cn"  # Alibaba's mainland regions
    assert rules.jurisdiction_of(None, "tencent")[0] == "cn"  # Tencent's list prices are mainland China's
    assert rules.jurisdiction_of(None, "lambda") == (None, "")
