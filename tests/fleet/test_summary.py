"""fleet report keeps a small summary per node (summary.py), not its full facts and bench result."""

from __future__ import annotations

import json
import pickle
import shutil

from gpuwise.fleet.drift import node_values
from gpuwise.fleet.layout import load_node
from gpuwise.fleet.summary import summarize
from tests.conftest import CAPTURES


def test_a_summary_keeps_what_the_report_compares_and_is_small(tmp_path):
    node = tmp_path / "h200a"
    shutil.copytree(CAPTURES / "h200-1gpu-kvm-vm", node / "capture")
    shutil.copy(CAPTURES / "h200-1gpu-kvm-vm.bench-quick.json", node / "bench.json")
    full = load_node(node)
    s = summarize(full)
    assert s.group == ("NVIDIA H200", "unknown")
    assert s.values == node_values(full.facts)
    usable = [
        (m.name, m.device, m.value) for m in full.bench.results if m.status == "ok" and m.value is not None
    ]
    assert [(m.name, m.device, m.value) for m in s.bench.results] == usable
    recorded = json.loads((node / "bench.json").read_text())
    steps = {m["name"]: m["extra"]["step_ms"] for m in recorded["results"] if "step_ms" in m.get("extra", {})}
    assert steps and all(s.bench.find(n).extra == {"step_ms": v} for n, v in steps.items())
    assert {f.id for f in s.findings} == {f.id for f in full.findings if f.status != "pass"}
    # what crosses from a worker and stays in memory: a fraction of the full node (ratio in one run)
    assert len(pickle.dumps(s)) * 4 < len(pickle.dumps(full))
