"""What a buyer can buy for one run (issue 11, item 8): reserved terms, capacity blocks, node ties."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from gpuwise.plan import commitments
from gpuwise.plan.defaults import PlanDefaults
from gpuwise.plan.export import plan_to_json
from gpuwise.plan.planner import choose_nodes, make_plan
from gpuwise.plan.workload import OrgContext

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LLM7B = EXAMPLES / "llm-7b-pretrain-1t.yaml"
OPTIONS = EXAMPLES / "plan-options.yaml"


def _blocks():
    return commitments.block_billing(PlanDefaults())["aws-capacity-blocks"]


def test_capacity_blocks_bill_whole_days_then_weeks():
    bb = _blocks()
    days = bb.billed_days(np.array([0.5, 3.7, 24.0, 24.5, 14 * 24.0, 15 * 24.0, 100 * 24.0]))
    assert days.tolist() == [1, 1, 1, 2, 14, 21, 105]
    assert bb.week_steps_until_days == 182 and bb.max_instances_per_block == 64
    assert bb.max_instances_total == 256
    assert "docs.aws.amazon.com" in bb.source and "capacity-blocks" in bb.source


def test_reserved_terms_need_reuse_and_a_horizon_that_covers_them():
    run_days = np.array([38.0, 400.0])
    short = OrgContext(horizon_years=3)
    assert commitments.reserved_allowed(short, 365, run_days).tolist() == [False, True]
    reused = OrgContext(horizon_years=3, reuse_capacity=True)
    assert commitments.reserved_allowed(reused, 1095, run_days).tolist() == [True, True]
    reused_short_horizon = OrgContext(horizon_years=1, reuse_capacity=True)
    assert commitments.reserved_allowed(reused_short_horizon, 1095, run_days).tolist() == [False, False]
    assert commitments.reserved_allowed(reused_short_horizon, 365, run_days).tolist() == [True, True]


def _row(plan, **match):
    return next(i for i, r in enumerate(plan.rows) if all(getattr(r, k) == v for k, v in match.items()))


def test_a_38_day_run_is_never_priced_on_a_3_year_reservation(tmp_path):
    plan = make_plan(LLM7B, OPTIONS)
    reserved = [o for o, r in enumerate(plan.rows) if r.pricing.startswith("reserved")]
    assert reserved and all(plan.chosen[o] < 0 for o in reserved)
    runnable = [o for o in reserved if plan.perf.infeasible[o, 2] == 0]
    assert runnable and all("term > run" in plan.short_reasons(o, 2) for o in runnable)
    assert plan.decision.rent.pricing in ("on_demand", "spot", "capacity_block")
    assert any("reuse_capacity" in n for n in plan.notes)
    reused = tmp_path / "w.yaml"
    reused.write_text(LLM7B.read_text() + "  reuse_capacity: true\n")
    plan = make_plan(reused, OPTIONS)
    assert any(plan.chosen[o] >= 0 for o, r in enumerate(plan.rows) if r.pricing == "reserved_3y")


def test_a_short_run_on_capacity_blocks_pays_a_whole_day(tmp_path):
    # resnet50 at 16 nodes runs for minutes; a capacity block still costs 24 hours per instance.
    plan = make_plan(EXAMPLES / "resnet50-imagenet.yaml", OPTIONS)
    o = _row(plan, provider="aws-capacity-blocks", instance_type="p4d.24xlarge")
    row = plan.rows[o]
    assert row.pricing == "capacity_block"
    for k, n in enumerate(plan.nodes):
        hours = plan.perf.time_to_train_s[o, k] / 3600
        if not math.isfinite(hours):
            continue
        assert hours < 24
        assert plan.billed_hours[o, k] == 24
        assert plan.run_cost[o, k] == pytest.approx(row.node_hour_price * n * 24)
    doc = plan_to_json(plan)
    opt = next(x for x in doc["options"] if x["key"] == row.key)
    assert all(p["billed_hours"] in (None, 24) for p in opt["per_nodes"])


def test_capacity_blocks_cap_instances():
    plan = make_plan(LLM7B, OPTIONS, nodes=[4, 300])
    o = _row(plan, provider="aws-capacity-blocks", instance_type="p5.48xlarge")
    assert plan.blocked[o, 1] & commitments.BLOCK_TOO_MANY and not plan.blocked[o, 0]
    assert "more instances than capacity blocks allow" in plan.reasons(o, 1)


def test_node_counts_within_the_tie_tolerance_prefer_fewer_nodes():
    feasible = np.ones((1, 4), dtype=bool)
    days = np.array([[40.0, 20.0, 10.0, 5.0]])
    cost = np.array([[101.5, 100.0, 103.0, 110.0]])
    assert choose_nodes(feasible, days, cost, None, 0.02).tolist() == [0]  # 101.5 ties with 100
    assert choose_nodes(feasible, days, cost, None, 0.0).tolist() == [1]
    assert choose_nodes(feasible, days, cost, 30.0, 0.02).tolist() == [1]  # 1 node misses the deadline
    assert choose_nodes(feasible, days, cost, 1.0, 0.02).tolist() == [3]  # none meets it: the fastest
    assert PlanDefaults().source("decision.node_tie_tolerance").startswith("heuristic: ")


def test_the_recommendation_names_what_to_rent_and_what_to_buy():
    d = make_plan(LLM7B, OPTIONS).decision
    rent, buy = d.rent, d.buy
    assert rent.provider and rent.instance_type and rent.pricing and rent.nodes >= 1
    assert buy.side == "build" and buy.nodes >= 1 and buy.gpu
    doc = plan_to_json(make_plan(LLM7B, OPTIONS))["decision"]
    assert doc["rent"]["instance_type"] == rent.instance_type and doc["rent"]["nodes"] == rent.nodes
    assert doc["buy"]["text"].startswith("buy ") and len(doc["buy"]["cost_per_run_range"]) == 2
