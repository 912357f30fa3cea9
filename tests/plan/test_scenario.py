"""Validation (a): the source document's cloud-VPC vs InfiniBand scenario, as the model computes it."""

from __future__ import annotations

from pathlib import Path

from gpuwise.plan.scenario import NETWORKS, main, scenario

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_faster_network_scales_at_least_as_well():
    res = scenario(str(EXAMPLES / "llm-7b-pretrain-1t.yaml"))
    eff16 = [res[label]["efficiency"][2] for label, *_ in NETWORKS]
    assert eff16 == sorted(eff16)  # 25G < 50G < 100G < HDR <= NDR
    assert all(res[label]["efficiency"][0] == 1.0 for label, *_ in NETWORKS)
    # IB keeps > 90% at 16 nodes; 25G VPC loses a large share (the source document's direction of effect).
    assert eff16[-1] > 0.9 and eff16[0] < 0.8


def test_table_prints(capsys):
    assert main([str(EXAMPLES / "llm-7b-pretrain-1t.yaml")]) == 0
    out = capsys.readouterr().out
    assert "| llm-7b-pretrain-1t | VPC 25G TCP |" in out and "claim 50–60%" in out
