"""Inference decisions read kinds, sides and numbers only: rewording every reason and flip that
plan/serving/decide.py creates must not change the verdict, the reasons' kinds and sides, or the flips."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from gpuwise.plan.decision import Flip, Reason
from gpuwise.plan.serving import decide as decide_module
from gpuwise.plan.serving.planner import make_serving_plan

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
ORGS = {
    "as-shipped": {},
    "ops-team-long": {"ops_team": True, "horizon_years": 6},
    "on-prem": {"data_residency": "on-prem"},
    "short-no-team": {"ops_team": False, "horizon_years": 1},
}


@dataclasses.dataclass(frozen=True)
class LoudReason(Reason):
    def __post_init__(self) -> None:
        object.__setattr__(self, "text", "REWORDED " + self.text.upper().replace(":", " -"))
        object.__setattr__(self, "label", self.label.upper())


@dataclasses.dataclass(frozen=True)
class LoudFlip(Flip):
    def __post_init__(self) -> None:
        object.__setattr__(self, "text", "REWORDED " + self.text.upper())


def _variant(src: Path, org: dict, tmp_path: Path) -> Path:
    if not org:
        return src
    data = yaml.safe_load(src.read_text())
    data["org"].update(org)  # the example's own org keys are replaced, not repeated
    out = tmp_path / src.name
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    return out


@pytest.mark.parametrize("org", sorted(ORGS))
@pytest.mark.parametrize("example", ["llm-chat-serving.yaml", "image-api-flat.yaml"])
def test_rewording_keeps_every_verdict(example, org, tmp_path, monkeypatch):
    path = _variant(EXAMPLES / example, ORGS[org], tmp_path)
    plain = make_serving_plan(path).decision
    monkeypatch.setattr(decide_module, "Reason", LoudReason)
    monkeypatch.setattr(decide_module, "Flip", LoudFlip)
    loud = make_serving_plan(path).decision
    assert loud.verdict == plain.verdict
    assert [(r.kind, r.favours, r.numbers) for r in loud.reasons] == [
        (r.kind, r.favours, r.numbers) for r in plain.reasons
    ]
    assert [(f.kind, f.numbers) for f in loud.flips] == [(f.kind, f.numbers) for f in plain.flips]
    assert all(r.text.startswith("REWORDED") for r in loud.reasons)


def test_on_prem_residency_never_recommends_the_cloud(tmp_path):
    path = _variant(EXAMPLES / "llm-chat-serving.yaml", ORGS["on-prem"], tmp_path)
    assert make_serving_plan(path).decision.verdict in ("build", "hybrid")
