"""Provenance is typed: decisions read each value's kind, never its words.

Every provenance text of every option is reworded as it is made (upper-cased, prefixed); the plan must
still say which values were calibrated and which MFU is a generic fallback, exactly as shipped.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from gpuwise.plan import onprem, options
from gpuwise.plan.decision import ReasonKind
from gpuwise.plan.export import plan_to_json
from gpuwise.plan.planner import make_plan
from gpuwise.plan.provenance import Kind, Provenance, Source

ROOT = Path(__file__).resolve().parents[2]
LLM7B = ROOT / "examples" / "llm-7b-pretrain-1t.yaml"
OPTIONS = ROOT / "examples" / "plan-options.yaml"
H200_BENCH = Path(__file__).parent / "data" / "bench_h200_quick.json"
NO_MATCH = "matched no option's GPU"


@dataclasses.dataclass(frozen=True)
class RewordedSource(Source):
    def __post_init__(self) -> None:
        object.__setattr__(self, "text", "REWORDED " + self.text.upper())


@pytest.fixture
def reworded(monkeypatch):
    monkeypatch.setattr(options, "Source", RewordedSource)
    monkeypatch.setattr(onprem, "Source", RewordedSource)


def _fallback_build(tmp_path: Path) -> Path:
    """AWS offers and one L20 build: the catalog has no MFU default or MAMF for L20, so its MFU is the fallback."""
    path = tmp_path / "o.yaml"
    path.write_text(
        "cloud: {providers: [aws]}\n"
        "onprem:\n  - name: l20\n    gpu: L20\n    fabric: roce-200g\n    costs: {server_price_per_node: 40000}\n"
    )
    return path


def test_provenance_reads_as_text_and_is_written_with_a_kind():
    prov = Provenance({"mfu": Source(Kind.CALIBRATED, "calibrated: measured")})
    assert (
        prov["mfu"] == "calibrated: measured"
        and prov.get("x", "") == ""
        and dict(prov) == {"mfu": prov["mfu"]}
    )
    assert prov.kind("mfu") is Kind.CALIBRATED and prov.kind("x") is None and prov.measured()
    with pytest.raises(TypeError, match="needs a Source"):
        prov["price"] = "catalog"  # type: ignore[assignment]
    assert not Provenance(
        {"price": Source(Kind.CATALOG, "calibrated in 2025")}
    ).measured()  # words don't count


def test_calibrated_rows_are_known_by_kind_not_by_words(reworded):
    plan = make_plan(LLM7B, OPTIONS, H200_BENCH)
    h200 = [r for r in plan.rows if r.gpu_name == "H200"]
    assert h200 and all(r.provenance["mfu"].startswith("REWORDED CALIBRATED") for r in h200)
    assert all(r.provenance.kind("mfu") is Kind.CALIBRATED for r in h200)
    assert not any(NO_MATCH in n for n in plan.notes)  # the calibration did apply


def test_calibration_that_matches_no_gpu_is_said(reworded, tmp_path):
    only_l20 = tmp_path / "l20.yaml"
    only_l20.write_text(
        _fallback_build(tmp_path).read_text().replace("{providers: [aws]}", "{include: false}")
    )
    plan = make_plan(LLM7B, only_l20, H200_BENCH)
    assert plan.calibration.used and not any(r.provenance.measured() for r in plan.rows)
    assert any(NO_MATCH in n for n in plan.notes)


@pytest.mark.parametrize("reword", [False, True])
def test_fallback_mfu_caveat_is_read_from_the_kind(reword, tmp_path, monkeypatch):
    if reword:
        monkeypatch.setattr(options, "Source", RewordedSource)
        monkeypatch.setattr(onprem, "Source", RewordedSource)
    plan = make_plan(LLM7B, _fallback_build(tmp_path))
    build = next(r for r in plan.rows if r.kind == "onprem")
    assert build.provenance.kind("mfu") is Kind.FALLBACK
    assert plan.decision.best_onprem is not None and plan.decision.best_cloud is not None
    estimates = [r for r in plan.decision.reasons if r.kind == ReasonKind.ESTIMATE]
    assert len(estimates) == 1 and "L20" in estimates[0].text


def test_json_rows_carry_each_provenance_kind():
    doc = json.loads(json.dumps(plan_to_json(make_plan(LLM7B, OPTIONS, H200_BENCH))))
    kinds = {k.value for k in Kind}
    for row in doc["options"]:
        assert (
            set(row["provenance_kind"]) == set(row["provenance"])
            and set(row["provenance_kind"].values()) <= kinds
        )
    by_gpu = {row["gpu"]: row["provenance_kind"]["mfu"] for row in doc["options"]}
    assert by_gpu["H200"] == "calibrated" and {v for g, v in by_gpu.items() if g != "H200"} <= kinds - {
        "calibrated"
    }


def test_an_options_file_network_is_an_override(tmp_path):
    path = tmp_path / "o.yaml"
    path.write_text(
        "cloud: {include: false}\nonprem:\n"
        "  - {name: given, gpu: H100-SXM, fabric: ib-ndr, network_gbps: 800}\n"
        "  - {name: catalog, gpu: H100-SXM, fabric: ib-ndr}\n"
    )
    rows = {r.label: r for r in make_plan(LLM7B, path).rows}
    assert rows["given"].provenance.kind("network") is Kind.OPTIONS
    assert rows["catalog"].provenance.kind("network") is Kind.CATALOG
