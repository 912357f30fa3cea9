"""bench/report_file.py: reading a `gpuwise bench --save` file back (plan --calibrate, doctor --bench-results)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuwise.bench.report_file import read_bench_report
from gpuwise.errors import DataValidationError, UserInputError

RECORDED = Path(__file__).parent.parent / "captures" / "h200-1gpu-kvm-vm.bench-quick.json"


def test_a_recorded_report_reads_back():
    report = read_bench_report(RECORDED, "--bench-results")
    assert report.results and report.find("matmul_bf16") is not None


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("{not json", "not a readable JSON bench report"),
        ('{"schema": "gpuwise-plan/1"}', "schema is 'gpuwise-plan/1', expected 'gpuwise-bench/1'"),
        ("[1, 2]", "schema is 'list'"),
        ('{"schema": "gpuwise-bench/1", "results": [{"value": NaN}]}', "NaN is not a number gpuwise accepts"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"schema": "gpuwise-bench/1", "results": [{"name": "x"}]}', "field results.0"),
    ],
)
def test_bad_files_name_the_option_the_file_and_the_fix(tmp_path, text, match):
    path = tmp_path / "b.json"
    path.write_text(text)
    with pytest.raises(DataValidationError, match=match) as err:
        read_bench_report(path, "--calibrate")
    message = str(err.value)
    assert message.startswith((f"{path}: --calibrate", f"{path}:1: --calibrate"))  # file:line when known
    assert "To fix: pass a file written by `gpuwise bench" in message


def test_missing_file(tmp_path):
    with pytest.raises(UserInputError, match="no such file"):
        read_bench_report(tmp_path / "absent.json", "--bench-results")
