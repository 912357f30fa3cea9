"""The evidence corpus (tests/fixtures/evidence, provenance in SOURCES.md): every recording gives the findings
its golden (golden.yaml, written from the recording's own lines) expects, no warning or critical its
evidence contradicts, and renders in every format without None, nan or serializer warnings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from conftest import real_files
from gpuwise.bench.nccl_files import merge_into
from gpuwise.commands.evidence_files import read_evidence
from gpuwise.errors import UserInputError
from gpuwise.facts.evidence import detect_kinds
from gpuwise.facts.models import Facts
from gpuwise.pipeline import diagnose
from tests.advise.capture_kit import assert_renders_clean

CORPUS = Path(__file__).parent.parent / "fixtures" / "evidence"
GOLDEN = yaml.safe_load((CORPUS / "golden.yaml").read_text(encoding="utf-8"))
# the rules these recordings speak to: any other warn/fail of theirs is a false alarm
JUDGED = re.compile(
    r"^(gpu\.dcgm_(diag|nvlink)|fabric\.|kernel\.(link_flaps|bond_down|pcie_aer|oom_kills|hung_tasks|machine_checks)|gpu\.xid_errors|nccl\.)"
)


def _text(f) -> str:
    parts = [
        f.title,
        f.recommendation.text,
        *(str(e.value) for e in f.evidence),
        *(e.path for e in f.evidence),
    ]
    return "\n".join(parts)


def _doctor(path: Path):
    facts = Facts()
    measurements, logs = read_evidence([path], facts)
    report = diagnose(facts, merge_into(None, measurements), "onprem", tuple(logs))
    return report, measurements, logs


def test_every_recording_has_a_golden_and_provenance():
    files = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.glob("*/*") if p.is_file())
    assert files == sorted(GOLDEN), "each recording needs an entry in golden.yaml (and golden no stale one)"
    sources = (CORPUS / "SOURCES.md").read_text(encoding="utf-8")
    missing = [f for f in files if f not in sources]
    assert not missing, f"not in SOURCES.md: {missing}"
    assert len(files) >= 15


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_recording_gives_its_expected_findings(name):
    golden = GOLDEN[name]
    path = CORPUS / name
    if golden.get("refused"):
        with pytest.raises(UserInputError) as err:
            _doctor(path)
        assert golden["refused"] in str(err.value)
        return
    if golden["kind"] != "nccl":
        assert detect_kinds(path.read_text(encoding="utf-8")) == [golden["kind"]]
    report, measurements, logs = _doctor(path)
    judged = [f for f in report.findings if JUDGED.match(f.id)]
    matched = set()
    for exp in golden["expect"]:
        if exp["id"] == "measurement":
            assert any(exp["contains"] == f"{m.value:g}" for m in measurements), [
                m.value for m in measurements
            ]
            continue
        if exp["id"] == "nccl_log":  # what the reader took from the log: {field, contains}
            values = [str(getattr(log, exp["field"])) for log in logs]
            assert any(exp["contains"] in v for v in values), (exp, values)
            continue
        hits = [
            i
            for i, f in enumerate(judged)
            if f.id == exp["id"] and f.status == exp["status"] and exp["contains"] in _text(f)
        ]
        assert hits, f"{name}: no {exp} among {[(f.id, f.status, _text(f)[:300]) for f in judged]}"
        matched.update(hits)
    false_alarms = [
        (f.id, f.status) for i, f in enumerate(judged) if i not in matched and f.status in ("warn", "fail")
    ]
    assert not false_alarms, f"{name}: warnings or criticals the recording does not support: {false_alarms}"


RENDERED = [CORPUS / n for n, g in sorted(GOLDEN.items()) if not g.get("refused")] + real_files("nccl_tests")


@pytest.mark.parametrize("path", RENDERED, ids=lambda p: p.name)
def test_recording_renders_without_none_nan_or_serializer_warnings(path):
    assert_renders_clean(lambda: _doctor(path)[0], path.name)
