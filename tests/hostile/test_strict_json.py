"""Every `--json` output is strict JSON (RFC 8259: no NaN, no Infinity), on a capture whose NVML data
holds NaN and infinities: `probe --from` printed `NaN`/`Infinity` and exited 0 (issue 28)."""

from __future__ import annotations

import json
import shutil

import pytest

from gpuwise.errors import EXIT_OK, EXIT_WARNINGS
from tests.hostile import builders as b

H200 = b.TESTS / "captures" / "h200-1gpu-kvm-vm"
BENCH = b.TESTS / "captures" / "h200-1gpu-kvm-vm.bench-quick.json"


def _refuse(constant: str):
    raise AssertionError(f"{constant} in the JSON output")


def strict(text: str):
    return json.loads(text, parse_constant=_refuse)


def nan_capture(dest):
    """The real H200 capture with NaN, Infinity and -Infinity in its NVML document."""
    shutil.copytree(H200, dest)
    nvml = dest / "commands/nvml.txt"
    text = nvml.read_text()
    for old, new in (
        ('"power_limit_watts": 700.0', '"power_limit_watts": NaN'),
        ('"temperature_c": 34.0', '"temperature_c": Infinity'),
        ('"sm_clock_mhz": 345', '"sm_clock_mhz": -Infinity'),
    ):
        assert old in text
        text = text.replace(old, new)
    nvml.write_text(text)
    return dest


@pytest.fixture
def hostile(sandbox):
    nan_capture(sandbox.work / "nan")
    shutil.copy(BENCH, sandbox.work / "bench.json")
    shutil.copy(b.WORKLOAD, sandbox.work / "w.yaml")
    for node in ("node01", "node02", "node03"):
        nan_capture(sandbox.work / "fleet" / node / "capture")
    sandbox.freeze_inputs()
    return sandbox


def test_probe_json_on_nan_nvml_is_strict_and_says_why(hostile):
    out = hostile.run("probe", "--from", "nan", "--json").check(EXIT_OK)
    gpu = strict(out.stdout)["gpus"][0]
    assert gpu["power_limit_watts"] is None and gpu["temperature_c"] is None
    assert "not a finite number" in gpu["unknown"]["power_limit_watts"]["text"]


def test_every_json_output_is_strict(hostile):
    """doctor, doctor with bench results, plan, fleet report, compare, history list and show."""
    runs = [
        (("doctor", "--from", "nan", "--json", "-o", "d1.json"), EXIT_WARNINGS, "d1.json"),
        (
            ("doctor", "--from", "nan", "--bench-results", "bench.json", "--json", "-o", "d2.json"),
            EXIT_WARNINGS,
            "d2.json",
        ),
        (("plan", "w.yaml", "--json"), EXIT_OK, None),
        (("fleet", "report", "fleet", "--json"), EXIT_OK, None),
        (("compare", "d1.json", "d2.json", "--json"), EXIT_OK, None),
        (("compare", "bench.json", "d2.json", "--json"), EXIT_OK, None),
        (("history", "list", "--json"), EXIT_OK, None),
        (("history", "show", "1", "--json"), EXIT_OK, None),
    ]
    hostile.allowed_outputs |= {"d1.json", "d2.json"}
    for args, rc, written in runs:
        out = hostile.run(*args).check(rc)
        doc = strict((hostile.work / written).read_text() if written else out.stdout)
        assert doc, args


def test_history_json_is_strict_on_a_database_holding_nan_and_infinity(hostile):
    """A history database written by an older gpuwise (or edited) holds NaN in a run's document and an
    infinite metric: `history show` and `history trend` still print strict JSON."""
    import sqlite3

    hostile.run("doctor", "--from", "nan").check(EXIT_WARNINGS)
    db = sqlite3.connect(hostile.history / "history.db")
    with db:
        db.execute(
            'UPDATE runs SET document = replace(document, \'"schema"\', \'"injected": NaN, "schema"\')'
        )
        db.execute("INSERT INTO metrics VALUES (1, 'matmul_bf16', 1e999, 'TFLOP/s', -1e999, NULL, 3)")
    db.close()
    show = hostile.run("history", "show", "1", "--json").check(EXIT_OK).stdout
    strict(show)
    assert '"injected": null' in show  # the document is there, its NaN as null
    # a `doctor --from` run is a replay of another host's data: only `--host all` shows it
    strict(hostile.run("history", "trend", "matmul_bf16", "--host", "all", "--json").check(EXIT_OK).stdout)
