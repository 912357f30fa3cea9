"""A file that is not the document it should be is a UserInputError (exit 3) naming the file, the
schema and the first bad field, with a To fix; never a KeyError or a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuwise.documents.doctor import DoctorReport
from gpuwise.documents.ids import PLAN_SCHEMA, REPORT_SCHEMA
from gpuwise.documents.load import DocumentError, parse_document, read_document
from gpuwise.documents.plan import PlanDocument, ServingPlan, TrainingPlan
from gpuwise.errors import UserInputError

EXAMPLES = Path(__file__).parents[2] / "examples"
PLAN = {"schema": PLAN_SCHEMA, "decision": {"verdict": "rent"},
        "options": [{"key": "a", "kind": "cloud", "chosen_nodes": 2, "per_nodes": [{"nodes": 2, "cost_per_run": 5.0}]}]}  # fmt: skip


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("{oops", "not valid JSON"),
        ("[1]", "not a gpuwise-plan/1 document \\(its schema is a JSON list\\)"),
        ('{"schema": "gpuwise-bench/1"}', "its schema is 'gpuwise-bench/1'"),
        (json.dumps({**PLAN, "options": [{"key": "a", "kind": "cloud", "chosen_nodes": "two"}]}),
         "field options.0.chosen_nodes: "),
        (json.dumps({**PLAN, "options": [{"kind": "cloud"}]}), "field options.0.key: Field required"),
        (json.dumps({**PLAN, "decision": []}), "field decision: "),
    ],
)  # fmt: skip
def test_a_bad_plan_names_the_file_and_the_first_bad_field(tmp_path, text, match):
    path = tmp_path / "plan.json"
    path.write_text(text)
    with pytest.raises(DocumentError, match=match) as err:
        read_document(path, PlanDocument, PLAN_SCHEMA, fix="pass a plan")
    assert isinstance(err.value, UserInputError) and err.value.exit_code == 3
    assert str(err.value).startswith(str(path)) and str(err.value).endswith("To fix: pass a plan")


def test_a_plan_is_read_as_training_or_serving_by_its_kind():
    assert isinstance(parse_document(PLAN, PlanDocument, PLAN_SCHEMA, path="p", fix="f"), TrainingPlan)
    serving = {"schema": PLAN_SCHEMA, "kind": "inference", "options": [{"strategy": "peak"}]}
    assert isinstance(parse_document(serving, PlanDocument, PLAN_SCHEMA, path="p", fix="f"), ServingPlan)
    option = parse_document(PLAN, PlanDocument, PLAN_SCHEMA, path="p", fix="f").options[0]
    assert option.chosen().cost_per_run == 5.0 and option.price_source() is None


def test_launch_with_a_damaged_plan_exits_3_with_the_field(tmp_path):
    bad = tmp_path / "plan.json"
    bad.write_text(json.dumps({**PLAN, "options": [{"key": "a", "kind": "cloud", "chosen_nodes": [2]}]}))
    r = subprocess.run(
        [sys.executable, "-m", "gpuwise.cli", "launch", str(EXAMPLES / "job-cpu.yaml"), "--plan", str(bad),
         "--target", "slurm", "--out", str(tmp_path / "gw-documents-out")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 3 and "field options.0.chosen_nodes" in r.stderr and "To fix:" in r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "gw-documents-out").exists()


def test_an_unmarked_object_is_read_only_when_asked():
    with pytest.raises(DocumentError, match="its schema is None"):
        parse_document({"findings": []}, DoctorReport, REPORT_SCHEMA, path="d", fix="f")
    assert (
        parse_document(
            {"findings": []}, DoctorReport, REPORT_SCHEMA, path="d", fix="f", unmarked=True
        ).findings
        == []
    )
