"""What a user sees when things go wrong, or when data looks like Rich markup.

1. Text from facts, captures, bench results, catalogs, plans and user files prints literally in every
   renderer: a mount point "[/run/netns]" once crashed `gpuwise probe` with a MarkupError.
2. Bad input, run as the real CLI in a subprocess: exit code 3, a message that says how to fix it, no
   traceback, nothing on stdout, and no file (partial or temporary) left behind; a user's existing
   file is never touched.
3. Every --json output is one valid JSON document with its "schema" key, alone on stdout.
4. Every command's --help works and documents its exit codes.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
import subprocess
import sys
import tarfile
import types
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
CAPTURE = TESTS / "captures" / "cpu-vm-kvm-docker"
H200 = TESTS / "captures" / "h200-1gpu-kvm-vm"
H200_BENCH = TESTS / "captures" / "h200-1gpu-kvm-vm.bench-quick.json"
WORKLOAD = ROOT / "examples" / "resnet50-imagenet.yaml"
MARK = "[/p]"  # an unmatched closing tag: Rich raises MarkupError if it ever reads this as markup


def gpuwise(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "120", "HOME": str(cwd or Path.cwd())}  # HOME: no user offers files
    return subprocess.run(
        [sys.executable, "-m", "gpuwise.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env=env,
    )


# --- 1. markup safety ------------------------------------------------------------------------------


def _plain_str(annotation) -> bool:
    """True for `str` and `str | None`: fields that hold free text (Literal fields keep their values)."""
    if annotation is str:
        return True
    args = typing.get_args(annotation)
    return typing.get_origin(annotation) in (typing.Union, types.UnionType) and set(args) == {
        str,
        type(None),
    }


def _poison_value(value, annotation):
    if isinstance(value, str):
        return value + MARK if _plain_str(annotation) else value
    if isinstance(value, BaseModel) or (dataclasses.is_dataclass(value) and not isinstance(value, type)):
        return poison(value)
    args = typing.get_args(annotation)
    if isinstance(value, list):
        return [_poison_value(v, args[0] if args else None) for v in value]
    if isinstance(value, dict):
        return {k: _poison_value(v, args[1] if len(args) == 2 else None) for k, v in value.items()}
    return value


def poison(obj):
    """A copy of a pydantic model or dataclass with MARK appended to every free-text field, recursively."""
    if isinstance(obj, BaseModel):
        fields = type(obj).model_fields
        return obj.model_copy(
            update={n: _poison_value(getattr(obj, n), f.annotation) for n, f in fields.items()}
        )
    hints = typing.get_type_hints(type(obj))
    new = copy.copy(obj)
    for f in dataclasses.fields(obj):
        object.__setattr__(new, f.name, _poison_value(getattr(obj, f.name), hints.get(f.name)))
    return new


def _text(doc) -> str:
    """A view's Document as wide text, rendered with colour so markup parsing would show."""
    from gpuwise.report.formats import render

    return render(doc, "text", width=400, color=True)


def test_probe_prints_every_fact_literally():
    from gpuwise.capture.host import CaptureHost
    from gpuwise.facts.collect import collect_facts
    from gpuwise.report.views.probe import probe_view

    facts = poison(collect_facts(CaptureHost(H200)))
    facts.kernel.sysctl = {"vm.[/x]": "[/y] 1"}
    facts.network.nccl_conf = {"NCCL_SOCKET_IFNAME": "[/eth]"}  # a dict, as the reader makes it
    text = _text(probe_view(facts))
    assert text.count(MARK) >= 20
    for literal in ("vm.[/x]", "[/y] 1", "NCCL_SOCKET_IFNAME=[/eth]", f"{facts.kernel.release}"):
        assert literal in text


def test_bench_view_prints_names_and_reasons_literally():
    from gpuwise.documents.bench import BenchReport
    from gpuwise.report.views.bench import bench_view

    report = poison(BenchReport.model_validate_json(H200_BENCH.read_text()))
    report.environment["warnings"] = ["clock [/locked]"]
    report.environment["gpus"] = ["NVIDIA [/H200]"]
    text = _text(bench_view(report))
    assert f"matmul_bf16{MARK}" in text and "clock [/locked]" in text and "NVIDIA [/H200]" in text
    assert any(f"{m.reason}" in text for m in report.results if m.reason)


def test_catalog_views_print_rows_literally():
    from gpuwise.catalog import fabrics, gpus, offers
    from gpuwise.report.views import catalog as view

    spec = poison(gpus.load_gpu_specs()[0])
    offer = poison(offers.load_offers([])[0])
    fabric = poison(fabrics.load_fabrics()[0])
    text = "".join(
        _text(doc)
        for doc in (
            view.gpus_view([spec]),
            view.offers_view([offer]),
            view.fabrics_view([fabric]),
            view.gpu_view(spec, "[/reported]"),
            view.offer_view([offer], offer.instance_type),
            view.fabric_view(fabric, fabric.key),
        )
    )
    assert MARK in spec.key and MARK in offer.instance_type and MARK in fabric.source
    for literal in (
        spec.key,
        spec.source,
        offer.instance_type,
        offer.provider,
        fabric.key,
        fabric.source,
        "'[/reported]'",
    ):
        assert literal in text


def test_plan_view_prints_labels_notes_and_reasons_literally():
    from gpuwise.plan.planner import make_plan
    from gpuwise.report.views.plan import plan_view

    plan = make_plan(WORKLOAD)
    plan.workload = plan.workload.model_copy(update={"name": "job [/x]"})
    for row in plan.rows:
        row.label, row.gpu_name, row.region = row.label + MARK, row.gpu_name + MARK, "ap-[/r]"
    plan.decision = poison(plan.decision)
    plan.notes = ["note [/n]"]
    text = _text(plan_view(plan, verbose=True))
    assert "job [/x]" in text and "note [/n]" in text and "ap-[/r]" in text
    assert plan.decision.summary in text and plan.rows[plan.shown[0]].label in text


def test_doctor_text_and_markdown_print_findings_literally():
    from gpuwise.capture.host import CaptureHost
    from gpuwise.facts.collect import collect_facts
    from gpuwise.pipeline import diagnose
    from gpuwise.report.formats import render
    from gpuwise.report.views.doctor import doctor_view

    report = poison(diagnose(collect_facts(CaptureHost(H200))))
    assert report.findings
    doc = doctor_view(report)
    text, md = render(doc, "text", width=400, color=True), render(doc, "md")
    for f in report.findings:
        assert f.title in text and f.title in md


def test_compare_prints_paths_and_hosts_literally(tmp_path):
    from gpuwise.report.compare import compare_files
    from gpuwise.report.formats import render
    from gpuwise.report.views.compare import compare_view

    def report(mount: str, host: str) -> dict:
        return {
            "schema": "gpuwise-report/1",
            "hostname": host,
            "facts": {"storage": {"mounts": [{"mountpoint": mount, "fstype": "nsfs|x"}]}},
            "findings": [{"id": "a.b", "title": "fix [/this]", "status": "warn"}],
        }

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(report("[/run/netns]", "[bold]host-a")))
    b.write_text(json.dumps(report("[/run/other]", "host-b")))
    comp = compare_files(a, b)
    text = render(compare_view(comp), "text", width=300)
    assert "storage.mounts[[/run/netns]].fstype" in text and "[bold]host-a" in text
    md = render(compare_view(comp), "md")
    assert "nsfs\\|x" in md  # a pipe in a value does not split the Markdown table


# --- 2. bad input through the real CLI ------------------------------------------------------------


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """A folder of broken inputs; each case runs with it as the working directory."""
    d = tmp_path_factory.mktemp("bad")
    (d / "empty_dir").mkdir()
    (d / "garbage_capture").mkdir()
    (d / "garbage_capture" / "meta.json").write_text("hi")
    (d / "garbage.txt").write_text("garbage\n")
    (d / "empty.yaml").write_text("")
    (d / "binary.bin").write_bytes(bytes(range(256)) * 8)
    good_tar = d / "good.tar.gz"
    with tarfile.open(good_tar, "w:gz") as tar:
        tar.add(CAPTURE, arcname=CAPTURE.name)
    (d / "truncated.tar.gz").write_bytes(good_tar.read_bytes()[:3000])
    (d / "empty.tar.gz").write_bytes(b"")
    (d / "not_json.json").write_text('{"schema": "gpuwise-bench/1", ')
    (d / "wrong_schema.json").write_text(json.dumps({"schema": "something-else/9"}))
    (d / "bench_bad_results.json").write_text(json.dumps({"schema": "gpuwise-bench/1", "results": "x"}))
    (d / "bench_bad_row.json").write_text(
        json.dumps({"schema": "gpuwise-bench/1", "results": [{"value": 1}]})
    )
    (d / "plan.json").write_text(json.dumps({"schema": "gpuwise-plan/1", "options": []}))
    (d / "report_bad_findings.json").write_text(json.dumps({"schema": "gpuwise-report/1", "findings": [1]}))
    (d / "list.json").write_text("[1, 2]")
    (d / "bench.json").write_text(H200_BENCH.read_text())
    workload = WORKLOAD.read_text()
    (d / "good.yaml").write_text(workload)
    (d / "bad_syntax.yaml").write_text("model: [1, 2\n")
    (d / "list.yaml").write_text("- 1\n- 2\n")
    (d / "wrong_types.yaml").write_text(workload.replace("global_batch: 8192", "global_batch: lots"))
    (d / "unknown_key.yaml").write_text(workload + "bogus_key: 1\n")
    (d / "bad_options.yaml").write_text("cloud: 5\n")
    (d / "offers_bad_header").mkdir()
    (d / "offers_bad_header" / "x.csv").write_text("provider,instance_type\naws,p4d\n")
    (d / "offers_bad_number").mkdir()
    (d / "offers_bad_number" / "x.csv").write_text(
        "InstanceType,AcceleratorName,AcceleratorCount,Price\np4d.24xlarge,A100,eight,32.77\n"
    )
    (d / "keep.md").write_text("my notes\n")
    return d


# (id, argv, a fragment of the expected message). All expect exit code 3.
CASES = [
    ("probe-empty-dir", ["probe", "--from", "empty_dir"], "not a gpuwise capture"),
    ("probe-garbage-meta", ["probe", "--from", "garbage_capture"], "meta.json"),
    ("probe-missing", ["probe", "--from", "nope"], "capture not found"),
    ("probe-garbage-file", ["probe", "--from", "garbage.txt"], "garbage.txt"),
    ("probe-truncated-tar", ["probe", "--from", "truncated.tar.gz"], "truncated"),
    ("probe-empty-tar", ["probe", "--from", "empty.tar.gz"], "empty.tar.gz"),
    ("probe-bad-layer", ["probe", "--from", "good.tar.gz", "--layer", "gpus"], "unknown layer"),
    ("doctor-truncated-tar", ["doctor", "--from", "truncated.tar.gz"], "truncated"),
    (
        "doctor-bench-garbage",
        ["doctor", "--from", "good.tar.gz", "--bench-results", "garbage.txt"],
        "not a readable JSON",
    ),
    (
        "doctor-bench-not-json",
        ["doctor", "--from", "good.tar.gz", "--bench-results", "not_json.json"],
        "not a readable JSON",
    ),
    (
        "doctor-bench-wrong-shape",
        ["doctor", "--from", "good.tar.gz", "--bench-results", "bench_bad_results.json"],
        "field results",
    ),
    (
        "doctor-bench-is-plan",
        ["doctor", "--from", "good.tar.gz", "--bench-results", "plan.json"],
        "gpuwise-plan/1",
    ),
    ("doctor-bench-dir", ["doctor", "--from", "good.tar.gz", "--bench-results", "empty_dir"], "empty_dir"),
    ("doctor-bad-format", ["doctor", "--from", "good.tar.gz", "--format", "xml"], "--format"),
    ("doctor-bad-env", ["doctor", "--from", "good.tar.gz", "--env", "moon"], "--env"),
    ("doctor-quick-on-capture", ["doctor", "--from", "good.tar.gz", "--bench", "quick"], "capture"),
    ("doctor-out-unwritable", ["doctor", "--from", "good.tar.gz", "-o", "/proc/report.md"], "cannot write"),
    ("doctor-out-is-dir", ["doctor", "--from", "good.tar.gz", "-o", "empty_dir"], "is a directory"),
    ("doctor-keeps-file", ["doctor", "--from", "truncated.tar.gz", "-o", "keep.md"], "truncated"),
    ("compare-missing", ["compare", "nope.json", "bench.json"], "no such file"),
    ("compare-garbage", ["compare", "garbage.txt", "bench.json"], "not readable JSON"),
    ("compare-binary", ["compare", "binary.bin", "bench.json"], "not readable JSON"),
    ("compare-list", ["compare", "list.json", "bench.json"], "schema"),
    ("compare-plan", ["compare", "bench.json", "plan.json"], "gpuwise-plan/1"),
    ("compare-bad-results", ["compare", "bench.json", "bench_bad_results.json"], "field results"),
    ("compare-bad-findings", ["compare", "report_bad_findings.json", "bench.json"], "field findings.0"),
    ("compare-out-unwritable", ["compare", "bench.json", "bench.json", "-o", "/proc/c.md"], "cannot write"),
    ("plan-missing", ["plan", "nope.yaml"], "not found"),
    ("plan-bad-syntax", ["plan", "bad_syntax.yaml"], "not valid YAML"),
    ("plan-list", ["plan", "list.yaml"], "mapping"),
    ("plan-wrong-types", ["plan", "wrong_types.yaml"], "global_batch"),
    ("plan-unknown-key", ["plan", "unknown_key.yaml"], "bogus_key"),
    ("plan-empty", ["plan", "empty.yaml"], "missing required field"),
    ("plan-dir", ["plan", "empty_dir"], "empty_dir"),
    ("plan-binary", ["plan", "binary.bin"], "binary.bin"),
    ("plan-bad-options", ["plan", "good.yaml", "--options", "bad_options.yaml"], "cloud"),
    ("plan-options-syntax", ["plan", "good.yaml", "--options", "bad_syntax.yaml"], "not valid YAML"),
    ("plan-calibrate-garbage", ["plan", "good.yaml", "--calibrate", "garbage.txt"], "JSON"),
    ("plan-calibrate-plan", ["plan", "good.yaml", "--calibrate", "plan.json"], "gpuwise-plan/1"),
    (
        "plan-calibrate-bad-row",
        ["plan", "good.yaml", "--calibrate", "bench_bad_row.json"],
        "bench_bad_row.json",
    ),
    ("plan-bad-sweep", ["plan", "good.yaml", "--sweep", "nodes=a,b"], "--sweep"),
    ("plan-out-unwritable", ["plan", "good.yaml", "-o", "/proc/plan.json"], "cannot write"),
    ("catalog-show-unknown", ["catalog", "show", "H100"], "never guesses"),
    ("catalog-offers-missing-dir", ["catalog", "offers", "--catalog", "nope"], "does not exist"),
    ("catalog-offers-bad-header", ["catalog", "offers", "--catalog", "offers_bad_header"], "InstanceType"),
    ("catalog-offers-bad-number", ["catalog", "offers", "--catalog", "offers_bad_number"], "eight"),
    (
        "catalog-import-garbage",
        ["catalog", "import-skypilot", "garbage.txt", "--provider", "aws", "-o", "o.csv"],
        "InstanceType",
    ),
    (  # no --provider and a file that is not a SkyPilot catalog: the header is the problem, not the provider
        "catalog-import-garbage-no-provider",
        ["catalog", "import-skypilot", "garbage.txt", "-o", "o.csv"],
        "no InstanceType column",
    ),
    (
        "catalog-import-binary",
        ["catalog", "import-skypilot", "binary.bin", "--provider", "aws", "-o", "o.csv"],
        "UTF-8",
    ),
    (
        "catalog-import-unwritable",
        ["catalog", "import-skypilot", "garbage.txt", "-o", "/proc/o.csv"],
        "cannot write",
    ),
    ("bench-only-nonsense", ["bench", "--only", "nonsense"], "unknown benchmark"),
    (
        "bench-data-dir-missing",
        ["bench", "--only", "storage", "--data-dir", "/nonexistent-gpuwise"],
        "not a writable directory",
    ),
    (
        "bench-data-dir-read-only",  # root passes os.access here; creating a file fails
        ["bench", "--only", "storage", "--data-dir", "/sys"],
        "not a writable directory",
    ),
    ("bench-save-unwritable", ["bench", "--only", "compute", "--save", "/proc/bench.json"], "cannot write"),
    ("bench-save-is-dir", ["bench", "--only", "compute", "--save", "empty_dir"], "is a directory"),
    ("bench-output-is-dir", ["bench", "--only", "compute", "-o", "empty_dir"], "is a directory"),
    ("bench-legacy-json-file", ["bench", "--only", "compute", "--json", "b.json"], "use --save b.json"),
    ("bench-bad-sizes", ["bench", "--only", "collective", "--sizes", "8:banana"], "is not a size"),
    ("capture-existing-file", ["capture", "-o", "garbage.txt"], "already exists"),
    ("capture-unwritable", ["capture", "-o", "/proc/gpuwise-capture"], "cannot write"),
]


USAGE_ERRORS = [
    ["doctor", "--bogus"],
    ["bench", "--world-size", "0"],
    ["nonsense"],
    ["plan"],
    ["catalog", "show"],
    ["doctor", "--from"],
    ["catalog", "offers", "--min-network-gbps", "fast"],
]


@pytest.mark.parametrize("argv", USAGE_ERRORS, ids=[" ".join(a) for a in USAGE_ERRORS])
def test_usage_errors_exit_3_with_the_help_hint(argv):
    """Exit 3, not click's 2 (doctor's 'critical findings'), and never an 'internal error' message."""
    r = gpuwise(*argv)
    assert r.returncode == 3, r.stderr
    assert "Error:" in r.stderr and "internal error" not in r.stderr and "Traceback" not in r.stderr
    assert r.stdout == ""


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
    }


@pytest.mark.parametrize("argv,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_a_clean_error(inputs, argv, expected):
    before = _snapshot(inputs)
    r = gpuwise(*argv, cwd=inputs)
    assert r.returncode == 3, (r.returncode, r.stdout[-500:], r.stderr[-2000:])
    assert "Traceback" not in r.stderr + r.stdout and "internal error" not in r.stderr, r.stderr
    assert "To fix:" in r.stderr and expected in r.stderr, r.stderr
    assert r.stdout == "", r.stdout[:500]  # no half-printed report
    assert _snapshot(inputs) == before  # nothing written, nothing left half-written, keep.md untouched


def test_output_into_a_new_folder_is_created(tmp_path):
    """-o into a folder that does not exist yet: gpuwise creates it (documented by gpuwise.atomic)."""
    out = tmp_path / "reports" / "2026" / "doctor.md"
    r = gpuwise("doctor", "--from", str(CAPTURE), "--format", "md", "-o", str(out), cwd=tmp_path)
    assert r.returncode in (0, 1, 2), r.stderr
    assert out.read_text().startswith("# gpuwise doctor") and r.stdout == ""
    assert sorted(p.name for p in out.parent.iterdir()) == ["doctor.md"]


# --- 3. --json outputs ----------------------------------------------------------------------------


def _strict_json(text: str):
    """json.loads that also rejects NaN/Infinity, which other JSON readers refuse."""

    def reject(constant):
        raise ValueError(f"{constant} is not valid JSON")

    return json.loads(text, parse_constant=reject)


JSON_COMMANDS = [
    (["probe", "--from", str(H200), "--json"], "gpuwise-facts/1"),
    (["probe", "--from", str(H200), "--json", "--layer", "network"], "gpuwise-facts/1"),
    (["doctor", "--from", str(H200), "--format", "json"], "gpuwise-report/1"),
    (
        ["doctor", "--from", str(H200), "--format", "json", "--bench-results", str(H200_BENCH)],
        "gpuwise-report/1",
    ),
    (["plan", str(WORKLOAD), "--json"], "gpuwise-plan/1"),
    (["compare", str(H200_BENCH), str(H200_BENCH), "--format", "json"], "gpuwise-compare/1"),
    (["catalog", "gpus", "--json"], "gpuwise-catalog/1"),
    (["catalog", "fabrics", "--json"], "gpuwise-catalog/1"),
    (["catalog", "offers", "--json"], "gpuwise-catalog/1"),
    (["catalog", "show", "NVIDIA H100 80GB HBM3", "--json"], "gpuwise-catalog/1"),
    (["bench", "--only", "memory", "--json"], "gpuwise-bench/1"),
]


@pytest.mark.parametrize(
    "argv,schema", JSON_COMMANDS, ids=[" ".join(a[:2]) + f"#{i}" for i, (a, _) in enumerate(JSON_COMMANDS)]
)
def test_json_output_is_one_document_on_stdout(tmp_path, argv, schema):
    r = gpuwise(*argv, cwd=tmp_path)
    assert r.returncode in (0, 1, 2), r.stderr  # doctor's exit code is its verdict
    doc = _strict_json(r.stdout)  # the whole of stdout: no progress bars or notes mixed in
    assert doc["schema"] == schema


def test_bench_json_file_is_strict_json_and_stdout_is_the_tables(tmp_path):
    out = tmp_path / "b.json"
    r = gpuwise("bench", "--only", "compute", "--save", str(out), cwd=tmp_path, timeout=180)
    assert r.returncode == 0, r.stderr
    doc = _strict_json(out.read_text())
    assert doc["schema"] == "gpuwise-bench/1" and doc["results"]
    assert all(m["value"] is None or math.isfinite(m["value"]) for m in doc["results"])
    assert "Compute (matmul)" in r.stdout and f"wrote {out}" in r.stderr


def test_compare_refuses_nan_in_its_inputs(tmp_path):
    """json.loads accepts NaN in a hand-edited file; gpuwise refuses it (issue 10: no NaN in any input),
    so compare never computes ratios from it or echoes it into its own JSON."""
    doc = json.loads(H200_BENCH.read_text())
    for m in doc["results"]:
        m["value"] = float("nan") if m.get("value") is not None else None
    nan_file = tmp_path / "nan.json"
    nan_file.write_text(json.dumps(doc))  # json.dumps writes NaN
    r = gpuwise("compare", str(nan_file), str(H200_BENCH), "--format", "json", cwd=tmp_path)
    assert r.returncode == 3 and not r.stdout
    assert "NaN is not a number gpuwise accepts" in r.stderr and "To fix" in r.stderr


def test_plan_output_file_matches_json(tmp_path):
    out = tmp_path / "plan.json"
    r = gpuwise("plan", str(WORKLOAD), "--json", "-o", str(out), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and f"wrote {out}" in r.stderr  # -o writes instead of printing
    printed = gpuwise("plan", str(WORKLOAD), "--format", "json", cwd=tmp_path)
    assert _strict_json(out.read_text()) == _strict_json(printed.stdout)


# --- 4. help --------------------------------------------------------------------------------------

HELP = [
    [],
    ["probe"],
    ["capture"],
    ["bench"],
    ["doctor"],
    ["compare"],
    ["plan"],
    ["catalog"],
    ["catalog", "gpus"],
    ["catalog", "fabrics"],
    ["catalog", "offers"],
    ["catalog", "show"],
    ["catalog", "import-skypilot"],
    ["catalog", "fetch"],
    ["catalog", "fetch", "tencent"],
]
DOCUMENTS_EXIT_CODES = {"", "probe", "capture", "bench", "doctor", "compare", "plan", "catalog"}


def test_every_help_reads_and_documents_exit_codes():
    from typer.testing import CliRunner

    from gpuwise.cli import app

    runner = CliRunner()
    for argv in HELP:
        r = runner.invoke(app, [*argv, "--help"], env={"COLUMNS": "120"})
        assert r.exit_code == 0, (argv, r.output)
        text = " ".join(r.output.split())
        assert "Usage:" in text and "--help" in text
        assert "list[" not in text, (argv, "a raw Python type as a metavar")
        if " ".join(argv) in DOCUMENTS_EXIT_CODES:
            assert "Exit code" in text and "3 = " in text, (argv, text)


def test_doctor_bench_quick_calls_the_bench_runner_with_quick_options(monkeypatch):
    """Regression: doctor --bench quick called the progress helper with (context, entries) and crashed."""
    import gpuwise.bench.runner as runner
    from gpuwise.bench.registry import select
    from gpuwise.commands.doctor import _run_quick_bench
    from gpuwise.documents.bench import BenchReport

    seen = {}

    def fake_bench(options, only=None, progress=None, on_done=None):
        seen.update(mode=options.mode, only=only)
        for entry in select(None):
            on_done(entry, [])
        return BenchReport(mode=options.mode)

    monkeypatch.setattr(runner, "bench", fake_bench)
    report = _run_quick_bench()
    assert isinstance(report, BenchReport) and seen == {"mode": "quick", "only": None}


def test_ctrl_c_exits_130_with_a_word_not_a_traceback():
    code = (
        "import typer, "
        "gpuwise.cli as cli\n@cli.app.command('slow')\ndef slow():\n    raise KeyboardInterrupt\ncli.main()\n"
    )
    r = subprocess.run([sys.executable, "-c", code, "slow"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 130 and "interrupted" in r.stderr and "Traceback" not in r.stderr


def test_capture_prints_a_bracketed_output_path_literally(tmp_path):
    """The summary line used to be Rich markup with the path inside: '[/x]' in a path crashed it."""
    out = tmp_path / "run[/x]" / "cap.tar.gz"
    r = gpuwise("capture", "-o", str(out), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"wrote:{out}" in "".join(r.stdout.split())  # Rich may wrap the long line anywhere
    assert out.is_file() and "Traceback" not in r.stderr
    assert gpuwise("probe", "--from", str(out), "--json", cwd=tmp_path).returncode == 0


def test_bench_progress_line_prints_benchmark_text_literally(monkeypatch, capsys):
    """Progress text comes from benchmarks (e.g. the --data-dir path); on a terminal it was Rich markup."""
    import gpuwise.bench.runner as runner
    from gpuwise.bench.context import BenchOptions
    from gpuwise.commands.progress import run_bench_with_progress
    from gpuwise.documents.bench import BenchReport

    def fake_bench(options, only=None, progress=None, on_done=None):
        progress("storage", "fio randread on /data/[/scratch]")
        return BenchReport(mode=options.mode)

    monkeypatch.setattr(runner, "bench", fake_bench)
    monkeypatch.setenv("FORCE_COLOR", "1")  # render the bar as on a terminal
    monkeypatch.setenv("COLUMNS", "200")
    assert isinstance(run_bench_with_progress(BenchOptions(mode="quick"), "storage", 1), BenchReport)
    err = capsys.readouterr().err
    assert "storage: fio randread on /data/[/scratch]" in err, err  # printed as given, not parsed as markup
