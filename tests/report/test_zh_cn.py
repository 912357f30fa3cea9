"""`--lang zh-CN` on recorded data: the doctor report is Chinese throughout, keeps its numbers, commands and
ids, fits 80 columns with CJK's double-width characters, and matches a reviewed golden.

"Chinese throughout" is checked as: no run of 4 or more English words in what gpuwise wrote. Exempt are
what must stay as it is: commands and config lines (Code blocks, `code` spans), URLs, and what a finding
quotes rather than writes: the evidence (values read from the machine, such as a driver's error text) and
the citations (source, references, the source of a gain), which name English documents and sections.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len

from gpuwise import i18n
from gpuwise.i18n import word
from gpuwise.report.document import Code
from gpuwise.report.formats import render
from gpuwise.report.views.doctor import doctor_view
from tests.advise.capture_kit import doctor_report, make_capture
from tests.advise.test_doctor_golden import _real_gpu_outputs
from tests.conftest import CAPTURES, REAL, capture_dirs
from tests.report.zh_check import english_runs, written_texts

BENCH_FILE = CAPTURES / "h200-1gpu-kvm-vm.bench-quick.json"
GOLDEN_SOURCE = "nvidia_smi_text/azhpc-diagnostics_nvidia-smi-q_8x-a100-sxm4-40gb.out"


def _quoted(report) -> list[str]:
    """What findings quote rather than write: evidence values and citations (english_runs removes the longest first)."""
    out: list[str] = []
    for f in report.findings:
        out += [f.source, *f.references]
        out += [f.expected_gain.source] if f.expected_gain else []
        out += [json.dumps(e.value) if not isinstance(e.value, str) else e.value for e in f.evidence]
    # the bench results doctor read are quoted as recorded (their peak sources are in the bench run's language)
    for m in (report.measurements or {}).get("results") or []:
        out += [str((m.get("peak_source") or {}).get("text") or ""), str(m.get("reason") or "")]
    return [q for q in out if q]


def _english_runs(report) -> list[str]:
    return english_runs(doctor_view(report), _quoted(report))


def _recorded_reports(tmp: Path) -> list[tuple[str, object]]:
    """Doctor reports of every real GPU recording and every recorded capture (+ the bench run)."""
    from gpuwise.bench.report_file import read_bench_report

    out = []
    for i, (cid, path) in enumerate(_real_gpu_outputs()):
        text = path.read_text(encoding="utf-8", errors="replace")
        out.append((path.name, doctor_report(make_capture(tmp / f"c{i}", {cid: text}, hostname=path.stem))))
    out += [(c.name, doctor_report(c)) for c in capture_dirs()]
    bench = read_bench_report(BENCH_FILE, "--bench-results")
    out.append(("h200 with bench", doctor_report(CAPTURES / "h200-1gpu-kvm-vm", bench=bench)))
    for name, report in out:
        report.source = name  # not the tmp path
    return out


def test_doctor_in_chinese_leaves_no_english_sentence(zh, tmp_path):
    reports = _recorded_reports(tmp_path)
    assert len(reports) >= 3
    left = {name: runs for name, report in reports if (runs := _english_runs(report))}
    assert not left, f"untranslated text (wrap it in _() and translate it): {left}"


def test_the_english_check_catches_english(tmp_path):
    """The check above must be able to fail: the same reports in English are full of English runs."""
    name, report = _recorded_reports(tmp_path)[-1]
    assert len(_english_runs(report)) > 10, name


def test_chinese_report_keeps_numbers_commands_and_ids(zh, tmp_path):
    from gpuwise.bench.report_file import read_bench_report

    bench = read_bench_report(BENCH_FILE, "--bench-results")
    i18n.set_language("en")
    english = doctor_report(CAPTURES / "h200-1gpu-kvm-vm", bench=bench)
    i18n.set_language("zh-CN")
    chinese = doctor_report(CAPTURES / "h200-1gpu-kvm-vm", bench=bench)
    text = render(doctor_view(chinese), "text", width=100)
    assert [f.id for f in chinese.findings] == [f.id for f in english.findings]
    for en, zh_ in zip(english.findings, chinese.findings, strict=True):
        assert zh_.title == en.title  # computed in English under every language
        assert word(zh_.title) != en.title or not en.title.isascii(), en.title  # and worded in Chinese
        assert zh_.id in text
        for command in zh_.recommendation.commands:
            assert command in text and command in en.recommendation.commands
        assert [e.path for e in zh_.evidence] == [e.path for e in en.evidence]
    # every number of the English report appears in the Chinese one
    numbers = set(re.findall(r"\d+(?:\.\d+)?", render(doctor_view(english), "text", width=100)))
    assert numbers - set(re.findall(r"\d+(?:\.\d+)?", text)) == set()


def test_json_keys_and_enums_do_not_change_with_the_language(zh):
    capture = CAPTURES / "h200-1gpu-kvm-vm"
    chinese = doctor_report(capture).to_json_dict()
    i18n.set_language("en")
    english = doctor_report(capture).to_json_dict()

    def shape(node):
        if isinstance(node, dict):
            return {k: shape(v) for k, v in node.items()}
        if isinstance(node, list):
            return [shape(v) for v in node]
        return type(node).__name__

    assert shape(chinese) == shape(english)
    assert chinese["schema"] == english["schema"]
    for key in ("id", "layer", "priority", "status"):
        assert [f[key] for f in chinese["findings"]] == [f[key] for f in english["findings"]]
    assert [f["controllable"]["can"] for f in chinese["findings"]] == [
        f["controllable"]["can"] for f in english["findings"]
    ]
    # text is computed in English and worded only when shown: the JSON is the same in every language
    chinese.pop("created_at", None), english.pop("created_at", None)
    assert chinese == english


@pytest.mark.parametrize("width", [80, 60])
def test_chinese_text_fits_the_width_and_nothing_is_cut(zh, tmp_path, width):
    """CJK characters take two columns: Rich measures cells, and Chinese lines break between
    characters (formats/_cjk.py), never through a Latin word such as DataLoader."""
    for name, report in _recorded_reports(tmp_path):
        doc = doctor_view(report)
        out = render(doc, "text", width=width)
        code = {line for b in doc.blocks if isinstance(b, Code) for line in b.lines}
        for line in out.splitlines():
            if not any(c in line for c in code):
                assert cell_len(line) <= width, (name, line)
        assert "…" not in out
        flat = re.sub(r"\s+", "", out)
        for text in written_texts(doc):
            assert re.sub(r"\s+", "", text) in flat, (name, text)  # every character, in order
        texts = [re.sub(r"https?://\S+", " ", t) for t in written_texts(doc)]  # URLs fold anyway
        words = {w for t in texts for w in re.findall(r"[A-Za-z][A-Za-z0-9_.\-]{3,}", t)}
        lines_words = {w for line in out.splitlines() for w in re.findall(r"[A-Za-z][A-Za-z0-9_.\-]*", line)}
        broken = {w for w in words if cell_len(w) < width - 20 and w not in lines_words}
        assert not broken, (name, sorted(broken)[:5])  # a Latin word split across two lines


def test_golden_chinese_doctor_report(zh, tmp_path, golden):
    path = REAL / GOLDEN_SOURCE
    if not path.is_file():
        pytest.skip(f"real fixture {GOLDEN_SOURCE} not present")
    capture = make_capture(tmp_path / "c", {"nvidia-smi-q": path.read_text()}, hostname=path.stem)
    report = doctor_report(capture)
    report.source = f"<real>/{GOLDEN_SOURCE}"
    golden("doctor/zh-CN/a100-sxm4-40gb-8x.txt", render(doctor_view(report), "text", width=100))


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    base = {k: v for k, v in os.environ.items() if k not in ("LANG", "LC_ALL", "LC_MESSAGES", "LANGUAGE")}
    return subprocess.run(
        [sys.executable, "-m", "gpuwise.cli", *args],
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        timeout=300,
    )


def test_cli_lang_option_and_locale_detection():
    capture = str(CAPTURES / "cpu-vm-kvm-docker")
    english = _cli("doctor", "--from", capture)
    chinese = _cli("--lang", "zh-CN", "doctor", "--from", capture)
    from_env = _cli("doctor", "--from", capture, env={"LANG": "zh_CN.UTF-8"})
    forced_en = _cli("--lang", "en", "doctor", "--from", capture, env={"LANG": "zh_CN.UTF-8"})
    after = _cli("doctor", "--from", capture, "--lang", "zh-CN")  # as people type it: after the command
    assert after.stdout == chinese.stdout and after.returncode == chinese.returncode
    assert english.returncode == chinese.returncode == from_env.returncode == forced_en.returncode
    assert "Top actions" in english.stdout and "最优先的操作" not in english.stdout
    assert "最优先的操作" in chinese.stdout and "Top actions" not in chinese.stdout
    assert from_env.stdout == chinese.stdout
    assert forced_en.stdout == english.stdout


def test_cli_errors_in_chinese_keep_the_fix_and_the_exit_code(tmp_path):
    r = _cli("--lang", "zh-CN", "probe", "--from", str(tmp_path / "nope"))
    assert r.returncode == 3 and "Traceback" not in r.stderr
    assert "未找到采集包" in r.stderr and "解决方法：" in r.stderr and str(tmp_path / "nope") in r.stderr


def test_lang_moves_before_the_command_but_not_past_a_double_dash():
    from gpuwise.cli import lang_first

    assert lang_first(["doctor", "--lang", "zh-CN"]) == ["--lang", "zh-CN", "doctor"]
    assert lang_first(["doctor", "--lang=zh-CN", "--json"]) == ["--lang=zh-CN", "doctor", "--json"]
    assert lang_first(["watch", "--", "python", "--lang", "x"]) == ["watch", "--", "python", "--lang", "x"]


def test_cli_unknown_language_is_a_usage_error():
    r = _cli("--lang", "fr", "doctor")
    assert r.returncode == 3 and "zh-CN" in (r.stderr + r.stdout)


EXAMPLES = CAPTURES.parent.parent / "examples"


@pytest.mark.parametrize("workload", ["llm-7b-pretrain-1t.yaml", "resnet50-imagenet.yaml"])
def test_plan_in_chinese_keeps_the_decision_and_its_numbers(zh, workload):
    """The plan's decision is computed from kinds and numbers, never from wording: the same verdict,
    reasons and figures in both languages, and the Chinese text fits 80 columns."""
    from gpuwise.plan.planner import make_plan
    from gpuwise.report.views.plan import plan_view

    path, options = EXAMPLES / workload, EXAMPLES / "plan-options.yaml"
    chinese = make_plan(path, options)
    i18n.set_language("en")
    english = make_plan(path, options)
    en_text = render(plan_view(english), "text", width=80)
    i18n.set_language("zh-CN")
    zh_text = render(plan_view(chinese), "text", width=80)
    d_en, d_zh = english.decision, chinese.decision
    assert d_zh.verdict == d_en.verdict
    assert [(r.kind, r.favours, r.numbers) for r in d_zh.reasons] == [
        (r.kind, r.favours, r.numbers) for r in d_en.reasons
    ]
    assert [r.text for r in d_zh.reasons] == [r.text for r in d_en.reasons]  # English until worded
    assert [word(r.text) for r in d_zh.reasons] != [r.text for r in d_en.reasons]
    assert "建议：" in zh_text and "Recommendation" not in zh_text
    numbers = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?%?")
    assert set(numbers.findall(en_text)) - set(numbers.findall(zh_text)) == set()
    assert max(cell_len(line) for line in zh_text.splitlines()) <= 80
