"""Why a fact is unknown is data (a kind) plus words (a text); the kind is what code may read."""

from __future__ import annotations

import pytest

from gpuwise.facts.models import Cpu, Facts, Unknown, combined


def test_why_needs_a_kind_with_a_text_and_keeps_the_first_reason():
    cpu = Cpu()
    with pytest.raises(TypeError, match="needs kind="):
        cpu.why("model", "lscpu printed nothing")
    cpu.why("model", "lscpu printed nothing", kind="unparsable")
    cpu.why("model", Unknown(kind="failed", text="a later, less direct reason"))
    assert cpu.unknown["model"] == Unknown(kind="unparsable", text="lscpu printed nothing")


def test_combined_reason_is_the_least_conclusive_kind():
    parts = [Unknown(kind="tool_missing", text="a"), Unknown(kind="not_captured", text="b")]
    assert combined(parts, "a; b") == Unknown(kind="not_captured", text="a; b")  # never looked: no claim
    assert combined([Unknown(kind="failed", text="x")], "x").kind == "failed"


def test_facts_json_carries_kind_and_text():
    facts = Facts()
    facts.memory.why("total_bytes", "/proc/meminfo not found", kind="absent")
    data = facts.to_json_dict()
    assert data["memory"]["unknown"] == {"total_bytes": {"kind": "absent", "text": "/proc/meminfo not found"}}
    assert Facts.model_validate(data) == facts  # the JSON reads back as the same facts
