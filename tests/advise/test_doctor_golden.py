"""Golden doctor output for every capture in tests/captures/ and every GPU output in the real fixtures.

Regenerate with `pytest tests/advise/test_doctor_golden.py --update-goldens` and review the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuwise.report.formats import render
from gpuwise.report.views.doctor import doctor_view
from tests.advise.capture_kit import doctor_report, make_capture
from tests.conftest import GOLDEN, REAL, capture_dirs, real_files


def _real_gpu_outputs() -> list[tuple[str, Path]]:
    """(command id, file): how each recorded output would appear in a capture."""
    out = [("nvidia-smi-q-x", p) for p in real_files("nvidia_smi_xml", "*.xml")]
    for p in real_files("nvidia_smi_text"):
        name = p.name
        if "nvlink-s" in name:
            out.append(("nvidia-smi-nvlink-s", p))
        elif name.endswith("-a.txt") or "-q" in name:
            out.append(("nvidia-smi-q", p))
        else:
            out.append(("nvidia-smi", p))  # plain table: read for warnings
    # `topo -mp` is the PCIe-only matrix (no NVLink columns): not what `nvidia-smi-topo-m` holds.
    out += [("nvidia-smi-topo-m", p) for p in real_files("topo") if "topo-mp" not in p.name]
    return out


def _stable(report, source: str) -> str:
    crashed = [f.title for f in report.findings if f.title.startswith("rule ")]
    assert not crashed, crashed  # a rule that raised on real data is a bug, even though doctor survives it
    report.source = source  # tmp paths differ per run
    return render(doctor_view(report), "text", width=100)  # what `-o FILE` writes


REAL_GOLDENS = GOLDEN / "doctor" / "real"


def _golden_name(path: Path) -> str:
    rel = path.relative_to(REAL)
    return f"doctor/real/{rel.parent.name}/{path.stem}.txt"


def _real_cases() -> list:
    """One case per real GPU output; without the real fixtures, one visible skip that counts the goldens
    left unchecked (instead of an empty parameter set that runs nothing)."""
    cases = [pytest.param(cid, p, id=p.name) for cid, p in _real_gpu_outputs()]
    if cases:
        return cases
    unchecked = len(list(REAL_GOLDENS.rglob("*.txt")))
    reason = (
        f"real fixtures absent at {REAL}: {unchecked} golden files in tests/golden/doctor/real not checked"
    )
    return [pytest.param(None, None, id="real-fixtures-absent", marks=pytest.mark.skip(reason=reason))]


def test_every_real_golden_has_its_fixture(real):
    """A golden whose real output was renamed or removed would otherwise never be compared again."""
    expected = {_golden_name(p) for _cid, p in _real_gpu_outputs()}
    present = {str(p.relative_to(GOLDEN)) for p in REAL_GOLDENS.rglob("*.txt")}
    assert expected and present - expected == set()


@pytest.mark.parametrize("command_id,path", _real_cases())
def test_golden_real_gpu_output(real, tmp_path, golden, command_id, path):
    cap = make_capture(
        tmp_path / "c", {command_id: path.read_text(encoding="utf-8", errors="replace")}, hostname=path.stem
    )
    golden(_golden_name(path), _stable(doctor_report(cap), f"<real>/{path.relative_to(REAL)}"))


@pytest.mark.parametrize("capture", capture_dirs(), ids=lambda p: p.name)
def test_golden_recorded_capture(capture, golden):
    name = capture.name.removesuffix(".tar.gz")
    report = doctor_report(capture)
    golden(f"doctor/captures/{name}.txt", _stable(report, f"tests/captures/{capture.name}"))
    # The JSON contract too, minus what differs per run or per checkout.
    data = report.to_json_dict()
    data["created_at"] = data["gpuwise_version"] = None
    data["facts"]["meta"]["source"] = data["source"]
    golden(f"doctor/captures/{name}.json", data)
