"""Every source a user sees (a finding's source, references, expected gain, the thresholds it used) is
something the user can open: a public document or URL, or an explicit "heuristic: ..." — never the
team's internal notes (REFERENCE.md sections, DESIGN.md)."""

from __future__ import annotations

import pytest

from gpuwise.advise.engine import registry, run_rules, thresholds
from gpuwise.capture.host import CaptureHost
from gpuwise.facts.collect import collect_facts
from tests.advise.factories import healthy_node
from tests.conftest import CAPTURES, capture_dirs

INTERNAL = ("REFERENCE", "DESIGN.md")


def _internal(text: str) -> bool:
    return any(word in text for word in INTERNAL)


def test_rule_declarations_cite_public_sources():
    bad = []
    for r in registry().values():
        texts = [r.source, *r.references, *([r.gain.source] if r.gain else [])]
        bad += [(r.id, t) for t in texts if _internal(t)]
    assert not bad, bad


def test_threshold_sources_are_public_documents_or_heuristics():
    for t in thresholds().values():
        assert not _internal(t.source), t.name
        assert "http" in t.source or t.source.startswith("heuristic"), t.name


@pytest.mark.parametrize("capture", capture_dirs(), ids=lambda p: p.name)
def test_findings_on_recorded_captures_cite_public_sources(capture):
    from gpuwise.documents.bench import BenchReport

    bench = BenchReport.model_validate_json((CAPTURES / "h200-1gpu-kvm-vm.bench-quick.json").read_text())
    facts = collect_facts(CaptureHost(capture))
    for env in ("cloud", "onprem", "unknown"):
        for f in run_rules(facts, bench, env) + run_rules(healthy_node(), bench, env):
            texts = [f.source, *f.references, *([f.expected_gain.source] if f.expected_gain else [])]
            assert not [t for t in texts if _internal(t)], f.id
