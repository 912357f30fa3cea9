"""Doctor on the capture and `gpuwise bench --quick` results recorded together on a lent H200."""

from __future__ import annotations

from pathlib import Path

from gpuwise.advise.engine import run_rules
from gpuwise.capture.host import CaptureHost
from gpuwise.documents.bench import BenchReport
from gpuwise.facts.collect import collect_facts

CAPTURES = Path(__file__).parent.parent / "captures"
FACTS = collect_facts(CaptureHost(CAPTURES / "h200-1gpu-kvm-vm"))
BENCH = BenchReport.model_validate_json((CAPTURES / "h200-1gpu-kvm-vm.bench-quick.json").read_text())


def by_id(findings):
    return {f.id: f for f in findings}


def test_pageable_copies_are_not_judged_as_a_pcie_fault():
    # as recorded: pinned H2D 55.4 GB/s (88% of PCIe5 x16), pageable 7.1 GB/s (staged through a CPU memcpy)
    found = by_id(run_rules(FACTS, BENCH, "cloud"))
    assert found["bench.host_device_low"].status == "pass"
    gain = found["bench.pin_memory_gain"]
    assert gain.status == "info" and "7.8x" in gain.recommendation.text


def test_pin_memory_rule_is_quiet_when_pageable_is_as_fast():
    # edit: the pageable H2D result set to 90% of the pinned one
    edited = BENCH.model_copy(deep=True)
    pinned = edited.find("h2d_pinned").value
    edited.find("h2d_pageable").value = 0.9 * pinned
    assert by_id(run_rules(FACTS, edited, "cloud"))["bench.pin_memory_gain"].status == "pass"


def test_sustained_matmul_under_the_power_cap_is_explained_not_a_fault():
    # bf16 678.6 TFLOP/s = 68.6% of 989 while the 700 W cap held the SM clock at 1320 of 1980 MHz
    found = by_id(run_rules(FACTS, BENCH, "cloud"))
    f = found["bench.compute_low"]
    assert (f.status, f.priority) == ("info", "low") and "power-limited" in f.title
    assert any("clocks_after" in e.path and "1320 of 1980" in str(e.value) for e in f.evidence)


def test_pin_memory_rule_reads_full_mode_per_gpu_names():
    # `bench --full` measures every GPU and names the results h2d_pinned_gpu<N>; the rule pairs by params.
    edited = BENCH.model_copy(deep=True)
    for m in edited.results:
        if m.layer == "host-device":
            m.name = f"{m.name}_gpu0"
    gain = by_id(run_rules(FACTS, edited, "cloud"))["bench.pin_memory_gain"]
    assert gain.status == "info" and "7.8x" in gain.recommendation.text
    assert {e.path for e in gain.evidence} == {"h2d_pinned_gpu0", "h2d_pageable_gpu0"}
