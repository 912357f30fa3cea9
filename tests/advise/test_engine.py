"""The engine: a raising rule becomes an info finding, environments and priorities per kind, thresholds."""

from __future__ import annotations

from gpuwise.advise.engine import Rule, registry, run_rules, thresholds
from tests.advise.factories import cpu_vm, healthy_node


def _boom(ctx):
    raise KeyError("no such fact")


def test_a_raising_rule_becomes_an_info_finding():
    bad = Rule("test.boom", "kernel", "boom", "test", _boom)
    good = registry()["kernel.swap_on"]
    findings = run_rules(cpu_vm(), None, "cloud", rules=[bad, good])
    boom = next(f for f in findings if f.id == "test.boom")
    assert boom.status == "info" and "rule test.boom failed: KeyError" in boom.title
    assert any(f.id == "kernel.swap_on" for f in findings)  # the other rules still ran


def test_a_rule_returning_junk_is_reported_not_crashing():
    junk = Rule("test.junk", "kernel", "junk", "test", lambda ctx: ["not a finding"])
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
