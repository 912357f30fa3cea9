"""The engine: a raising rule becomes an info finding, environments and priorities per kind, thresholds."""

from __future__ import annotations

import pytest

from gpuwise.advise import controls
from gpuwise.advise.engine import Rule, RuleContext, registry, rule, run_rules, thresholds
from tests.advise.factories import cpu_vm, healthy_node


def _boom(ctx):
    raise KeyError("no such fact")


def test_a_raising_rule_becomes_an_info_finding():
    bad = Rule(id="test.boom", layer="kernel", title="boom", source="test", fn=_boom)
    good = registry()["kernel.swap_on"]
    findings = run_rules(cpu_vm(), None, "cloud", rules=[bad, good])
    boom = next(f for f in findings if f.id == "test.boom")
    assert boom.status == "info" and "rule test.boom failed: KeyError" in boom.title
    assert any(f.id == "kernel.swap_on" for f in findings)  # the other rules still ran


def test_a_rule_returning_junk_is_reported_not_crashing():
    junk = Rule(id="test.junk", layer="kernel", title="junk", source="test", fn=lambda ctx: ["not a finding"])
    (f,) = run_rules(cpu_vm(), None, "cloud", rules=[junk])
    assert f.title.startswith("rule test.junk failed: TypeError")


def test_environment_filter_and_unknown_controllability():
    only_cloud = [r for r in registry().values() if r.environments == ("cloud",)]
    assert only_cloud and not [f for f in run_rules(healthy_node(), None, "onprem", rules=only_cloud)]
    rule = registry()["pcie.width_below_max"]
    assert rule.priority_for("unknown") == "high"  # the higher of cloud (medium) and onprem (high)
    c = rule.controllable_for("unknown")
    assert c.can == "partly" and "on a cloud VM no" in c.reason and c.alternative
    assert rule.controllable_for("onprem").can == "yes"
    assert rule.controllable_for("cloud") == rule.controllable["cloud"]


def test_every_threshold_has_a_source_and_is_used():
    ths = thresholds()
    assert all(t.source for t in ths.values())
    import pathlib

    rules_dir = pathlib.Path(__file__).parents[2] / "src/gpuwise/advise/rules"
    rules_src = "".join(p.read_text() for p in rules_dir.glob("*.py"))
    unused = [name for name in ths if f'"{name}"' not in rules_src]
    assert not unused, f"thresholds.yaml rows no rule reads: {unused}"


def test_rule_declarations_are_keywords_and_typos_are_caught():
    with pytest.raises(TypeError):
        rule("test.positional", "kernel", "t", "s", priority="low")  # type: ignore[misc]
    with pytest.raises(TypeError, match="unknown option"):
        rule(id="test.typo", layer="kernel", title="t", source="s", priority="low", referenes=())(_boom)  # type: ignore[call-arg]
    assert "test.typo" not in registry()

    @rule(
        id="test.override",
        layer="kernel",
        title="t",
        source="s",
        priority="low",
        controllable=controls.CLOUD_KERNEL,
    )
    def override(ctx: RuleContext):
        return ctx.finding("warn", [], "do this", title="a finding's own title", priority="high")

    # declaring a rule outside gpuwise/advise/rules/ registers nothing
    assert "test.override" not in registry()
    (f,) = run_rules(cpu_vm(), None, "cloud", rules=[override])
    assert (f.title, f.priority, f.recommendation.text) == ("a finding's own title", "high", "do this")
    assert f.controllable == controls.KERNEL_ON_CLOUD
    with pytest.raises(TypeError, match="unknown override"):
        RuleContext(cpu_vm(), None, "cloud", override).finding("warn", [], titel="typo")  # type: ignore[call-arg]


def test_controllability_presets():
    assert dict(controls.CLOUD_HARDWARE) == {
        "cloud": controls.HARDWARE_ON_CLOUD,
        "onprem": controls.ONPREM_YES,
    }
    assert dict(controls.CLOUD_DRIVER) == {"cloud": controls.DRIVER_ON_CLOUD}
    assert set(controls.CONTAINER) == {"cloud", "onprem", "unknown"}
    uses = [r.controllable for r in registry().values() if r.controllable]
    # each named preset is used by at least one rule
    for name in (
        "CLOUD_HARDWARE",
        "CLOUD_FIRMWARE",
        "CLOUD_KERNEL",
        "CLOUD_FABRIC",
        "CLOUD_DRIVER",
        "CONTAINER",
    ):
        assert dict(getattr(controls, name)) in uses, name
