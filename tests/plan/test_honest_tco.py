"""Honest TCO and no silent fallback (issue 11, items 9 and 10)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuwise.plan import catalog_bridge as cat
from gpuwise.plan.decision import ReasonKind
from gpuwise.plan.defaults import PlanDefaults
from gpuwise.plan.explain import range_phrase, saving
from gpuwise.plan.export import plan_to_json
from gpuwise.plan.onprem import cost_inputs, range_drivers
from gpuwise.plan.options_file import OnpremBuild, OnpremCosts
from gpuwise.plan.planner import make_plan

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LLM7B = EXAMPLES / "llm-7b-pretrain-1t.yaml"
OPTIONS = EXAMPLES / "plan-options.yaml"
HEADER = (
    "Provider,InstanceType,AcceleratorName,AcceleratorCount,Region,NetworkGbps,Fabric,Currency,"
    "PriceSource,AsOf,Price\n"
)


def _h100(**costs):
    build = OnpremBuild(name="h100", gpu="H100-SXM", fabric="ib-ndr", costs=OnpremCosts(**costs))
    return cost_inputs(build, cat.match_gpu("H100-SXM"), True, PlanDefaults())


def test_defaults_charge_capital_staff_support_storage_and_management_network():
    (low, typical, high), _lead, prov = _h100()
    raw = cat.onprem_defaults()
    assert typical.interest_rate == raw.value("interest_rate") > 0
    assert typical.staff_per_node_year == pytest.approx(
        raw.value("staff_fte_per_node") * raw.value("staff_cost_per_fte_year")
    )
    assert typical.support_per_node_year == pytest.approx(8 * raw.value("support_per_gpu_year"))
    assert typical.storage_cost_per_node > 0 and typical.management_network_per_node > 0
    # Residual value quoted at 3 years, carried to the 5-year life at a constant yearly decline.
    assert typical.lifetime_years == 5
    assert typical.residual_fraction == pytest.approx(0.30 ** (5 / 3))
    assert high.lifetime_years == 3 and high.residual_fraction == pytest.approx(0.25)
    assert low.annual_per_node() < typical.annual_per_node() < high.annual_per_node()
    assert "13% at 5" in prov["residual_fraction"]


def test_a_users_number_is_a_point_and_replaces_the_per_node_default():
    (low, typical, high), _lead, prov = _h100(staff_per_year=250_000, interest_rate=0.1)
    assert low.staff_per_year == typical.staff_per_year == high.staff_per_year == 250_000
    assert typical.staff_per_node_year == 0 and prov["staff_per_year"] == "options file"
    assert low.interest_rate == high.interest_rate == 0.1


def test_range_drivers_name_the_inputs_that_move_the_cost():
    cases, _lead, _prov = _h100()
    names = [n for n, _share in range_drivers(cases)]
    assert names and "server_price_per_node" in names
    assert all(share > 0 for _n, share in range_drivers(cases))
    fixed, _lead, _prov = _h100(
        server_price_per_node=300_000, lifetime_years=5, support_per_gpu_year=0, interest_rate=0.07
    )
    assert "server_price_per_node" not in [n for n, _s in range_drivers(fixed)]


def test_range_phrases():
    assert saving(70, 100) == pytest.approx(0.3) and saving(125, 100) == pytest.approx(-0.2)
    assert range_phrase(0.55, 0.30, []) == "build is 30–55% cheaper"
    assert range_phrase(-0.1, -0.2, []) == "cloud is 10–20% cheaper"
    text = range_phrase(0.2, -0.1, ["the server price", "the cost of capital"])
    assert text.startswith("it depends on the server price and the cost of capital")


def test_the_decision_and_json_carry_the_cost_range():
    plan = make_plan(LLM7B, OPTIONS)
    cost = next(r for r in plan.decision.reasons if r.kind == ReasonKind.COST)
    n = cost.numbers
    assert n["build_cost_per_run_low"] < n["build_cost_per_run"] < n["build_cost_per_run_high"]
    assert "cheaper" in cost.text and "–" in cost.text
    doc = plan_to_json(plan)
    build = next(o for o in doc["options"] if o["kind"] == "onprem" and o["chosen_nodes"])
    k = [p["nodes"] for p in build["per_nodes"]].index(build["chosen_nodes"])
    low, high = build["per_nodes"][k]["cost_per_run_range"]
    assert low < build["per_nodes"][k]["cost_per_run"] < high
    assert build["onprem_costs_range"]["capital_per_node_year"][0] > 0


def _unpriced_tencent(tmp_path: Path) -> Path:
    offers = tmp_path / "offers"
    offers.mkdir()
    (offers / "tencent.csv").write_text(
        HEADER
        + "tencent,GT4.41XLARGE948,A100,8,ap-guangzhou,50,vpc-tcp,CNY,none,2026-11-29,\n"
        + "tencent,GT4.20XLARGE474,A100,4,ap-guangzhou,25,vpc-tcp,CNY,none,2026-11-29,\n"
    )
    options = tmp_path / "o.yaml"
    options.write_text(
        f"cloud:\n  providers: [tencent]\n  gpus: [A100]\n  regions: [ap-guangzhou]\n"
        f"  offers_dirs: [{offers}]\n"
    )
    return options


def test_no_priced_cloud_offer_is_said_not_fallen_back_on(tmp_path):
    d = make_plan(LLM7B, _unpriced_tencent(tmp_path)).decision
    assert d.verdict == "undecided" and d.best_cloud is None and d.buy is not None
    why = next(r for r in d.reasons if r.kind == ReasonKind.NO_CLOUD_OPTION)
    assert "no priced cloud offer for A100 in ap-guangzhou" in why.text
    assert "gpuwise catalog fetch tencent" in why.text and why.numbers["unpriced_offers"] == 2
    assert "no priced cloud offer" in d.summary and "no cloud option qualifies" not in d.summary


def test_leaving_a_side_out_on_purpose_is_settled(tmp_path):
    options = tmp_path / "o.yaml"
    options.write_text("cloud: {include: false}\n")
    d = make_plan(LLM7B, options).decision
    assert d.verdict == "build"
    assert next(r for r in d.reasons if r.kind == ReasonKind.NO_CLOUD_OPTION).numbers["settled"] == 1
    options.write_text("cloud: {providers: [aws]}\nonprem: []\n")
    d = make_plan(LLM7B, options).decision
    assert d.verdict == "cloud" and d.rent is not None and d.buy is None
    assert any(r.kind == ReasonKind.NO_BUILD_OPTION for r in d.reasons)


def test_no_build_that_fits_is_said(tmp_path):
    options = tmp_path / "o.yaml"
    options.write_text(
        "cloud: {providers: [aws]}\nonprem:\n  - name: tiny\n    gpu: H100-SXM\n    gpus_per_node: 1\n"
        "    fabric: ib-ndr\n"
    )
    d = make_plan(LLM7B, options, nodes=[1]).decision
    why = next(r for r in d.reasons if r.kind == ReasonKind.NO_BUILD_OPTION)
    assert d.verdict == "cloud" and "can run this workload" in why.text


def test_every_cost_default_is_a_sourced_range():
    raw = cat.onprem_defaults()
    entries = list(raw.values.items()) + [
        (f"{n}.{c}", v) for n, m in raw.per_gpu_class.items() for c, v in m.items()
    ]
    for name, e in entries:
        if e.value is None:
            continue  # no source: the plan asks the user (tested in tests/catalog)
        assert e.low is not None and e.high is not None and e.low <= e.value <= e.high, name
        assert "REFERENCE" not in e.source and "REFERENCE" not in (e.note or ""), name
    assert "REFERENCE" not in raw.cloud_commitment_discounts_source + raw.spot_discount_source
