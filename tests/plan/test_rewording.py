"""Reasons are data: rewording every reason and flip must not change any plan's verdict.

Each case is planned twice: once as shipped, once with every Reason and Flip that plan/decide.py creates
rewritten as it is created (upper-cased, prefixed, colons removed), which breaks any verdict that looks at
message prefixes or splits labels on ':'. The verdict, each reason's kind, side and numbers, and the
break-even figures must be identical.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from gpuwise.plan import decide as decide_module
from gpuwise.plan.decision import Decision, Flip, Reason
from gpuwise.plan.planner import make_plan
from gpuwise.plan.serving.workload import workload_kind

ROOT = Path(__file__).resolve().parents[2]
OPTIONS = ROOT / "examples" / "plan-options.yaml"
# job-*.yaml are `gpuwise launch` jobs; inference plans have their own rewording test
# (tests/plan/serving/test_serving_rewording.py)
WORKLOADS = sorted(
    p
    for p in (ROOT / "examples").glob("*.yaml")
    if p != OPTIONS and not p.name.startswith("job-") and workload_kind(p) != "inference"
)
CALIBRATIONS = sorted((Path(__file__).parent / "data").glob("*.json"))
# Organisation contexts that reach the other verdict branches (residency, compliance, steady, close calls).
ORG_VARIANTS = {
    "as-shipped": {},
    "on-prem-residency": {"data_residency": "on-prem"},
    "compliance-ops-steady": {"compliance": "[hipaa]", "ops_team": "true", "utilisation": 0.9},
    "idle-short-no-team": {"utilisation": 0.05, "horizon_years": 1, "ops_team": "false"},
    "region-bursty": {"data_residency": "region", "burstiness": 5, "horizon_years": 5},
    # Building is clearly cheaper and the context votes sit exactly at the override line: counting a cost
    # reason as context (as a prefix test on reworded text would) moves the verdict from cloud to hybrid.
    "short-horizon-no-team": {"utilisation": 0.6, "burstiness": 1, "horizon_years": 2, "ops_team": "false"},
    "bursty-long-no-team": {"utilisation": 0.6, "burstiness": 3, "horizon_years": 5, "ops_team": "false"},
}


def reword(text: str) -> str:
    return "REWORDED " + text.upper().replace(":", " -")


@dataclasses.dataclass(frozen=True)
class RewordedReason(Reason):
    def __post_init__(self) -> None:
        object.__setattr__(self, "text", reword(self.text))
        object.__setattr__(self, "label", reword(self.label))


@dataclasses.dataclass(frozen=True)
class RewordedFlip(Flip):
    def __post_init__(self) -> None:
        object.__setattr__(self, "text", reword(self.text))


def _variant(path: Path, org: dict, tmp_path: Path) -> Path:
    """The workload with `org:` keys set (added under org: when the file does not have them)."""
    if not org:
        return path
    lines = path.read_text().splitlines()
    start = lines.index("org:") if "org:" in lines else None
    if start is None:
        lines.append("org:")
        start = len(lines) - 1
    for key, value in org.items():
        lines = [ln for ln in lines if not ln.startswith(f"  {key}:")]
        lines.insert(start + 1, f"  {key}: {value}")
    out = tmp_path / f"{path.stem}.yaml"
    out.write_text("\n".join(lines) + "\n")
    return out


def _nan_free(x: float | None) -> float | str | None:
    return "nan" if x is not None and math.isnan(x) else x


def _shape(d: Decision) -> dict:
    """Everything that must not depend on wording (NaN made comparable)."""
    return {
        "verdict": d.verdict,
        "best": (d.best_cloud, d.best_onprem),
        "reasons": [(r.kind, r.favours, {k: _nan_free(v) for k, v in r.numbers.items()}) for r in d.reasons],
        "flips": [(f.kind, {k: _nan_free(v) for k, v in f.numbers.items()}) for f in d.flips],
        "break_even": (d.break_even_utilisation, d.break_even_months),
        "per_option": {k: (_nan_free(b.utilisation), _nan_free(b.months)) for k, b in d.per_option.items()},
    }


CASES = [
    pytest.param(
        w, opts, cal, org, id=f"{w.stem}-{'opts' if opts else 'catalog'}-{cal.stem if cal else 'nocal'}-{org}"
    )
    for w in WORKLOADS
    for opts in (None, OPTIONS)
    for cal in (None, *CALIBRATIONS)
    for org in ORG_VARIANTS
    if org == "as-shipped" or (opts is not None and cal is None)
]


def test_cases_cover_the_examples_and_the_test_data():
    assert len(WORKLOADS) >= 3 and CALIBRATIONS
    assert {c.values[0] for c in CASES} == set(WORKLOADS)
    assert {c.values[2] for c in CASES} >= set(CALIBRATIONS)


@pytest.mark.parametrize(("workload", "options", "calibration", "org"), CASES)
def test_rewording_never_changes_the_verdict(workload, options, calibration, org, tmp_path, monkeypatch):
    path = _variant(workload, ORG_VARIANTS[org], tmp_path)
    shipped = make_plan(path, options, calibration).decision
    monkeypatch.setattr(decide_module, "Reason", RewordedReason)
    monkeypatch.setattr(decide_module, "Flip", RewordedFlip)
    reworded = make_plan(path, options, calibration).decision

    assert shipped.reasons, "a case without reasons tests nothing"
    assert all(r.text.startswith("REWORDED ") for r in reworded.reasons + reworded.flips)
    assert all(not r.text.startswith("REWORDED ") for r in shipped.reasons + shipped.flips)
    assert _shape(reworded) == _shape(shipped)


def test_the_variants_reach_every_verdict(tmp_path):
    """The cases above are only worth something if they exercise different verdicts."""
    verdicts = set()
    for name, org in ORG_VARIANTS.items():
        (tmp_path / name).mkdir()
        for w in WORKLOADS:
            verdicts.add(make_plan(_variant(w, org, tmp_path / name), OPTIONS).decision.verdict)
    assert verdicts >= {"cloud", "build", "hybrid"}


@pytest.mark.parametrize(
    "options_text", ["cloud: {include: false}\n", "cloud: {providers: [aws]}\nonprem: []\n"]
)
def test_rewording_never_changes_a_one_sided_verdict(options_text, tmp_path, monkeypatch):
    """The no_cloud_option / no_build_option paths read numbers["settled"], never the text."""
    options = tmp_path / "o.yaml"
    options.write_text(options_text)
    workload = ROOT / "examples" / "llm-7b-pretrain-1t.yaml"
    shipped = make_plan(workload, options).decision
    monkeypatch.setattr(decide_module, "Reason", RewordedReason)
    monkeypatch.setattr(decide_module, "Flip", RewordedFlip)
    reworded = make_plan(workload, options).decision
    assert shipped.verdict in ("cloud", "build")
    assert _shape(reworded) == _shape(shipped)
