"""plan_defaults.yaml: every model default and decision threshold has a source, and the planner reads them."""

from __future__ import annotations

from pathlib import Path

from gpuwise.plan.defaults import PlanDefaults
from gpuwise.plan.export import ASSUMPTION_KEYS
from gpuwise.plan.planner import make_plan

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _leaves(node: dict, prefix: str = ""):
    for key, value in node.items():
        if isinstance(value, dict) and "value" in value:
            yield f"{prefix}{key}", value
        elif isinstance(value, dict):
            yield from _leaves(value, f"{prefix}{key}.")


def test_every_default_has_a_source():
    leaves = dict(_leaves(PlanDefaults().data))
    assert "decision.close_cost_margin" in leaves and "stragglers.compute_cv" in leaves
    unsourced = [k for k, v in leaves.items() if len(str(v.get("source", "")).strip()) < 20]
    assert unsourced == []


def test_decision_thresholds_are_sourced_heuristics_listed_as_assumptions():
    d = PlanDefaults()
    t = d.decision()
    assert (t.bursty_peak_ratio, t.long_horizon_years, t.close_cost_margin) == (2.0, 3.0, 0.15)
    assert (t.steady_utilisation, t.context_votes_override_cost, t.context_votes_tip_close_call) == (
        0.7,
        3,
        2,
    )
    for key in ASSUMPTION_KEYS:
        if key.startswith("decision."):
            assert d.source(key).startswith("heuristic: ")
    assert {f"decision.{k}" for k in vars(t)} <= set(ASSUMPTION_KEYS)


def test_thresholds_come_from_the_file_and_can_be_overridden(tmp_path):
    """llm-7b on a 1-year horizon with no ops team: building is cheaper across its whole cost range, but 3
    context votes for the cloud (short horizon, no ops team, deadline) overturn it (threshold 3). Raise the
    threshold and the cheaper build wins back, as a hybrid because it would miss the deadline.
    (resnet50 served here before on-prem costs became ranges; its range now crosses zero, a close call.)"""
    workload = tmp_path / "w.yaml"
    text = (EXAMPLES / "llm-7b-pretrain-1t.yaml").read_text()
    workload.write_text(
        text.replace("  horizon_years: 3", "  horizon_years: 1").replace("ops_team: true", "ops_team: false")
    )
    options = tmp_path / "o.yaml"
    text = (EXAMPLES / "plan-options.yaml").read_text()
    options.write_text(
        text.replace("model_overrides: {}", "model_overrides: {decision.context_votes_override_cost: 9}")
    )
    shipped = make_plan(workload, EXAMPLES / "plan-options.yaml").decision
    overridden = make_plan(workload, options)
    assert shipped.verdict == "cloud" and "context points to cloud" in shipped.summary
    assert overridden.decision.verdict == "hybrid"
    assert (
        overridden.defaults.source("decision.context_votes_override_cost") == "options file (model_overrides)"
    )
