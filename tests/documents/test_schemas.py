"""The checked-in JSON Schema of each document is what its model generates, and the documents gpuwise
commands write (run here on the recorded captures and examples) validate against those files."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from gpuwise.cli import app
from gpuwise.documents import ids
from gpuwise.documents.schemas import MODELS, SCHEMA_DIR, file_name, main, schema_text

TESTS = Path(__file__).parents[1]
CAPTURES = TESTS / "captures"
EXAMPLES = TESTS.parent / "examples"


def test_every_checked_in_schema_is_what_its_model_generates():
    stale = [
        sid for sid in MODELS if (SCHEMA_DIR / file_name(sid)).read_text(encoding="utf-8") != schema_text(sid)
    ]
    assert stale == [], "run `make schemas` and commit src/gpuwise/documents/schemas/"
    assert sorted(p.name for p in SCHEMA_DIR.glob("*.json")) == sorted(file_name(s) for s in MODELS)


def test_the_check_mode_names_a_stale_schema(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("gpuwise.documents.schemas.SCHEMA_DIR", tmp_path)
    (tmp_path / file_name(ids.PLAN_SCHEMA)).write_text("{}\n")
    assert main(["--check"]) == 1
    assert "gpuwise-plan-1.schema.json" in capsys.readouterr().out
    assert main([]) == 0 and main(["--check"]) == 0  # written, then current


def _validator(schema_id: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((SCHEMA_DIR / file_name(schema_id)).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _valid(schema_id: str, document: dict) -> None:
    assert document["schema"] == schema_id
    errors = sorted(_validator(schema_id).iter_errors(document), key=lambda e: list(e.path))
    assert errors == [], [f"{list(e.path)}: {e.message}" for e in errors[:3]]


def _run(*args: str) -> str:
    r = CliRunner().invoke(app, [*args])
    assert r.exit_code in (0, 1, 2), r.output
    return r.stdout


def test_bench_files_written_by_gpuwise_bench_validate():
    for path in sorted(CAPTURES.glob("*.bench-*.json")):
        _valid(ids.BENCH_SCHEMA, json.loads(path.read_text()))


def test_a_doctor_report_of_a_recorded_capture_validates():
    bench = CAPTURES / "h200-1gpu-kvm-vm.bench-quick.json"
    out = _run("doctor", "--from", str(CAPTURES / "h200-1gpu-kvm-vm"), "--bench-results", str(bench),
               "--format", "json", "--no-history")  # fmt: skip
    doc = json.loads(out)
    assert doc["findings"] and doc["measurements"]["results"]
    _valid(ids.REPORT_SCHEMA, doc)


def test_training_and_serving_plans_validate(tmp_path):
    training = json.loads(_run("plan", str(EXAMPLES / "resnet50-imagenet.yaml"), "--format", "json"))
    assert training["options"] and "kind" not in training
    _valid(ids.PLAN_SCHEMA, training)
    serving = json.loads(_run("plan", str(EXAMPLES / "llm-chat-serving.yaml"), "--format", "json"))
    assert serving["kind"] == "inference"
    _valid(ids.PLAN_SCHEMA, serving)


def test_a_launch_record_validates(tmp_path):
    out = tmp_path / "gw-documents-launch"
    _run("launch", str(EXAMPLES / "job-cpu.yaml"), "--target", "slurm", "--out", str(out))
    _valid(ids.LAUNCH_SCHEMA, json.loads((out / "launch.json").read_text()))


def test_a_tune_result_validates():
    from tests.tune.test_views import _tune_result

    result = _tune_result()
    result.winner = 1
    _valid(ids.TUNE_SCHEMA, result.to_json_dict())


def test_a_fleet_report_validates(tmp_path, real):
    from tests.fleet.fleet_kit import build_fleet

    root = build_fleet(tmp_path / "gw-documents-fleet", count=4)
    doc = json.loads(_run("fleet", "report", str(root), "--json", "--no-history"))
    assert doc["nodes"] and doc["distributions"]
    _valid(ids.FLEET_SCHEMA, doc)


@pytest.mark.slow
def test_a_stability_result_validates(tmp_path):
    pytest.importorskip("torch")
    saved = tmp_path / "stability.json"
    _run("stability", "--for", "3s", "--interval", "1s", "--layers", "memory", "--save", str(saved),
         "--no-history", "--json")  # fmt: skip
    _valid(ids.STABILITY_SCHEMA, json.loads(saved.read_text()))


def test_a_document_outside_its_schema_is_refused_by_the_schema_file():
    doc = json.loads((CAPTURES / "cpu-vm-kvm-docker.bench-quick.json").read_text())
    doc["results"][0]["stats"]["repeats"] = "many"
    assert list(_validator(ids.BENCH_SCHEMA).iter_errors(doc))
    plan = {"schema": ids.PLAN_SCHEMA, "options": [{"key": "x", "kind": "cloud", "chosen_nodes": "two"}]}
    assert list(_validator(ids.PLAN_SCHEMA).iter_errors(plan))


def test_the_schema_files_ship_in_the_wheel():
    import fnmatch

    import tomllib

    root = Path(__file__).parents[2]
    patterns = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "gpuwise"
    ]
    shipped = [p.relative_to(SCHEMA_DIR.parents[1]).as_posix() for p in SCHEMA_DIR.glob("*.json")]
    assert shipped and all(any(fnmatch.fnmatch(f, pat) for pat in patterns) for f in shipped)
