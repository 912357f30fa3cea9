"""Rewording any user-facing message must not change any verdict (issue 9, "reasons are data").

Every text a person reads (why a fact is unknown, where a peak came from, why a benchmark was
skipped, the environment evidence, a finding's title and advice) is rewritten into something that
shares no words with the original. Doctor's findings (id, status, priority, layer) and its exit code
must stay the same on every recorded capture, every real GPU output and the recorded bench results.
A rule that decided from wording ("not captured" in reason, "cpu" in reason) fails here: see
test_the_check_catches_a_rule_that_reads_wording.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from gpuwise.advise.engine import RuleContext, rule, run_rules
from gpuwise.advise.finding import Finding
from gpuwise.capture.host import CaptureHost, CommandResult
from gpuwise.capture.sources import ALL_COMMAND_IDS
from gpuwise.documents.bench import BenchReport, Measurement, PeakSource
from gpuwise.facts.collect import collect_facts
from gpuwise.facts.models import Facts, GpuProbe, Platform, Unknown
from gpuwise.report.model import exit_code_for
from tests.advise.capture_kit import make_capture
from tests.advise.test_doctor_golden import _real_gpu_outputs
from tests.conftest import CAPTURES, capture_dirs

ENVS = ("auto", "cloud", "onprem")
BENCH = BenchReport.model_validate_json((CAPTURES / "h200-1gpu-kvm-vm.bench-quick.json").read_text())
# Message fields per model: the text people read. Everything else is data code may decide on.
MESSAGE_FIELDS: dict[type, tuple[str, ...]] = {
    Unknown: ("text",),
    PeakSource: ("text",),
    Measurement: ("reason",),
    Platform: ("environment_reason",),
    GpuProbe: ("error", "notes"),
}


def reword(text: str) -> str:
    """A different wording with none of the original's words: reversed, upper-cased, marked."""
    return f"XX {text[::-1].upper()}" if text else text


def reworded(obj):
    """A deep copy of a model tree with every message field rewritten (lists and dicts followed)."""
    if isinstance(obj, BaseModel):
        update = {}
        for name in type(obj).model_fields:
            value = getattr(obj, name)
            if name in MESSAGE_FIELDS.get(type(obj), ()):
                update[name] = [reword(v) for v in value] if isinstance(value, list) else reword(value or "")
                update[name] = update[name] if value is not None else None
            else:
                update[name] = reworded(value)
        return obj.model_copy(update=update)
    if isinstance(obj, list):
        return [reworded(v) for v in obj]
    if isinstance(obj, dict):
        return {k: reworded(v) for k, v in obj.items()}
    return obj


def verdicts(findings: list[Finding]) -> tuple:
    """What a finding decides, in ranked order, plus doctor's exit code."""
    return (tuple((f.id, f.status, f.priority, f.layer) for f in findings), exit_code_for(findings))


def doctor_verdicts(facts: Facts, bench: BenchReport | None, env: str, rules=None) -> tuple:
    kind = facts.platform.environment if env == "auto" else env
    findings = run_rules(facts, bench, kind, rules)
    # The findings' own wording must not matter downstream either (ranking, exit code).
    reworded_findings = [
        f.model_copy(
            update={
                "title": reword(f.title),
                "recommendation": f.recommendation.model_copy(update={"text": reword(f.recommendation.text)}),
            }
        )
        for f in findings
    ]
    assert verdicts(reworded_findings) == verdicts(findings)
    return verdicts(findings)


def assert_wording_free(facts: Facts, bench: BenchReport | None = None, rules=None) -> None:
    changed = reworded(facts)
    assert changed != facts  # the rewrite reached something: otherwise this check proves nothing
    for env in ENVS:
        before = doctor_verdicts(facts, bench, env, rules)
        after = doctor_verdicts(changed, reworded(bench) if bench else None, env, rules)
        assert after == before, f"env {env}: a verdict changed when only wording changed"


def _inputs() -> list[tuple[str, Path | None, str | None]]:
    """(id, capture dir or None, (command id, real file) as 'cid|path' or None)."""
    out: list[tuple[str, Path | None, str | None]] = [(p.name, p, None) for p in capture_dirs()]
    out += [(f"real:{path.name}", None, f"{cid}|{path}") for cid, path in _real_gpu_outputs()]
    return out


@pytest.mark.parametrize(
    ("name", "capture", "real_output"), _inputs(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_doctor_verdicts_do_not_depend_on_wording(name, capture, real_output, tmp_path):
    if capture is None:
        cid, path = real_output.split("|", 1)
        capture = make_capture(
            tmp_path / "c", {cid: Path(path).read_text(encoding="utf-8", errors="replace")}
        )
    assert_wording_free(collect_facts(CaptureHost(capture)))


class EditedCapture(CaptureHost):
    """A recorded capture with some commands taken from another capture, and one command not captured."""

    def __init__(self, path: Path, borrow: dict[str, CaptureHost] | None = None, drop: str | None = None):
        super().__init__(path)
        self.borrow, self.drop = borrow or {}, drop

    def run(self, command_id: str) -> CommandResult | None:
        if command_id == self.drop:
            return None
        if command_id in self.borrow:
            return self.borrow[command_id].run(command_id)
        return super().run(command_id)


@pytest.mark.parametrize("drop", [None, *ALL_COMMAND_IDS])
def test_gpu_node_with_each_command_not_captured(drop):
    """The H200 capture with the CPU VM's torch (a CPU-only build) and docker, then each command left out
    in turn: reasons of every kind (not captured, tool missing, not applicable) on a node with a GPU."""
    cpu_vm = CaptureHost(CAPTURES / "cpu-vm-kvm-docker")
    borrow = {"python-env": cpu_vm, "docker-version": cpu_vm}
    facts = collect_facts(EditedCapture(CAPTURES / "h200-1gpu-kvm-vm", borrow, drop))
    assert facts.gpus
    assert_wording_free(facts)


def test_with_bench_results_and_with_nothing_captured(tmp_path):
    h200 = collect_facts(CaptureHost(CAPTURES / "h200-1gpu-kvm-vm"))
    assert reworded(BENCH) != BENCH
    assert_wording_free(h200, BENCH)
    # An empty capture: every fact unknown, most "not captured", the case rules must not accuse.
    assert_wording_free(collect_facts(CaptureHost(make_capture(tmp_path / "empty"))))


def test_the_check_catches_a_rule_that_reads_wording(tmp_path):
    """The check above can fail: a rule deciding from a reason's wording is caught."""
    facts = collect_facts(CaptureHost(CAPTURES / "cpu-vm-kvm-docker"))
    assert facts.software.unknown["torch_cuda"].kind == "not_applicable"

    @rule(
        id="test.reads_wording",
        layer="toolchain",
        title="a rule that reads wording (test only)",
        source="test",
        priority="low",
    )
    def reads_wording(ctx: RuleContext):
        why = ctx.facts.software.unknown.get("torch_cuda")
        return ctx.finding("warn", []) if why and "cpu" in why.text.lower() else None

    with pytest.raises(AssertionError, match="a verdict changed"):
        assert_wording_free(facts, rules=[reads_wording])
