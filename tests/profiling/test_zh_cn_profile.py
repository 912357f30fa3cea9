"""`--lang zh-CN` on profile reports: Chinese throughout, the same numbers, op names and commands as in
English, and 80 columns.

Two reports: a real CPU profile of mlp-slow-data (3 steps under torch.profiler, data-bound: its
finding fires), and a Kineto trace with GPU kernels and a pageable host-to-device copy, written here in
the trace's format, for the GPU-only parts (launch-bound and copy findings, the GPU kernels block) that
a CPU machine cannot record. Each report's findings are judged in each language from the same
measurement (`judge`, as doctor --profile reads a profile back).
"""

from __future__ import annotations

import json
import re

import pytest
from rich.cells import cell_len

from gpuwise import i18n
from gpuwise.i18n import word
from gpuwise.profile.attribute import attribute
from gpuwise.profile.findings import findings, judge
from gpuwise.profile.model import ProfileResult
from gpuwise.report.formats import render
from gpuwise.report.views.profile import view
from tests.report.zh_check import english_runs

NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")


@pytest.fixture(scope="module")
def cpu_profile(tmp_path_factory) -> ProfileResult:
    from gpuwise.profile.run import profile

    trace = tmp_path_factory.mktemp("gwzh-profile") / "trace.json"
    i18n.set_language("en")
    return profile("mlp-slow-data", device="cpu", batch_size=8, trace_path=trace, wait=0, warmup=1, active=2)


def _x(name, ts, dur, cat):
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": 1, "tid": 1}


@pytest.fixture(scope="module")
def gpu_profile(tmp_path_factory) -> ProfileResult:
    """Two 1 ms steps whose GPU runs 40 kernels of 5 us and a pageable 0.2 ms copy in each."""
    events = []
    for i, start in enumerate((0, 1000)):
        events += [
            _x(f"ProfilerStep#{i}", start, 1000, "user_annotation"),
            _x("gpuwise/data", start, 100, "user_annotation"),
            _x("gpuwise/forward", start + 100, 400, "user_annotation"),
            _x("aten::linear", start + 110, 300, "cpu_op"),
            _x("gpuwise/backward", start + 500, 400, "user_annotation"),
            _x("gpuwise/optimizer", start + 900, 90, "user_annotation"),
            _x("Memcpy HtoD (Pageable -> Device)", start + 20, 200, "gpu_memcpy"),
        ]
        events += [_x("ampere_sgemm_32x32", start + 300 + 10 * k, 5, "kernel") for k in range(40)]
    path = tmp_path_factory.mktemp("gwzh-profile-gpu") / "trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    b = attribute(path)
    i18n.set_language("en")
    return ProfileResult(
        workload="gpt-small",
        device="cuda",
        batch_size=8,
        wait_steps=1,
        warmup_steps=1,
        active_steps=b.steps,
        trace_path=str(path),
        step_ms=b.step_ms,
        samples_per_s=8 / (b.step_ms / 1000),
        phases=b.phases,
        top_ops=b.top_ops,
        gpu_kernels=b.gpu,
        findings=findings(b, "cuda"),
    )


def _in_language(result: ProfileResult, lang: str) -> ProfileResult:
    i18n.set_language(lang)
    return result.model_copy(update={"findings": judge(result)})


def _quoted(result: ProfileResult) -> list[str]:
    """What the report quotes: the workload and trace names, op names, the findings' sources."""
    return [result.workload, result.trace_path, *(o.name for o in result.top_ops)] + [
        f.source for f in result.findings
    ]


# ids without "gpu": conftest skips a test whose keywords name the gpu marker
@pytest.fixture(params=["cpu-run", "kernel-trace"])
def measured(request, cpu_profile, gpu_profile) -> ProfileResult:
    return cpu_profile if request.param == "cpu-run" else gpu_profile


def test_profile_report_in_chinese_leaves_no_english_sentence(zh, measured):
    chinese = _in_language(measured, "zh-CN")
    assert chinese.findings, "each report has at least one finding to read"
    runs = english_runs(view(chinese), _quoted(chinese))
    assert not runs, f"untranslated text (wrap it in _() and translate it): {runs}"


def test_the_english_check_catches_english_in_the_profile_report(measured):
    english = _in_language(measured, "en")
    assert len(english_runs(view(english), _quoted(english))) > 5


def test_profile_numbers_ops_and_commands_are_the_same_in_both_languages(zh, measured):
    english = _in_language(measured, "en")
    en_text = render(view(english), "text", width=100)
    chinese = _in_language(measured, "zh-CN")
    zh_text = render(view(chinese), "text", width=100)
    assert [f.id for f in chinese.findings] == [f.id for f in english.findings]
    assert [f.severity for f in chinese.findings] == [f.severity for f in english.findings]
    assert [f.title for f in chinese.findings] == [f.title for f in english.findings]  # English until shown
    assert [word(f.title) for f in chinese.findings] != [f.title for f in english.findings]
    assert set(NUMBER.findall(en_text)) - set(NUMBER.findall(zh_text)) == set()
    for op in chinese.top_ops:
        assert op.name in zh_text
    for command in re.findall(r"`([^`]+)`", en_text):
        assert command in zh_text
    # the JSON keeps its keys, phase names and ids
    en_json, zh_json = english.to_json_dict(), chinese.to_json_dict()
    assert [p["name"] for p in zh_json["phases"]] == [p["name"] for p in en_json["phases"]]
    assert {k: v for k, v in zh_json.items() if k != "findings"} == {
        k: v for k, v in en_json.items() if k != "findings"
    }


@pytest.mark.parametrize("width", [80, 60])
def test_chinese_profile_text_fits_the_width(zh, measured, width):
    out = render(view(_in_language(measured, "zh-CN")), "text", width=width)
    for line in out.splitlines():
        if measured.trace_path not in line:  # a path is not broken (it is one word)
            assert cell_len(line) <= width, line
    assert "…" not in out


def test_a_profile_without_analysis_text_shows_no_catalog_header(zh, gpu_profile):
    """gettext maps "" to the catalog's header: the view must not translate an empty text."""
    out = render(view(gpu_profile.model_copy(update={"analysis": ""})), "text", width=80)
    assert "Project-Id-Version" not in out and "Plural-Forms" not in out
