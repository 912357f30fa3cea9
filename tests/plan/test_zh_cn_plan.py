"""`gpuwise plan --lang zh-CN` on the shipped training examples (with and without examples/plan-options.yaml):
Chinese throughout in text and HTML (charts included), the same decision and numbers as in English, 80
columns with CJK's double-width characters, the JSON's keys and enum values unchanged, and errors that end
with the Chinese "To fix".

"Chinese throughout" is checked as in tests/report/test_zh_cn.py: no run of 4 or more English words in
what gpuwise wrote. Exempt is what the plan quotes rather than writes: option names (a provider's instance
name such as "H100 SXM (Community Cloud)", the user's build names such as "8xH100 NDR (catalog costs)"),
the workload's name and path, and citations (an exchange rate's source, an assumption's source).
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len

from gpuwise import i18n
from gpuwise.catalog import data_paths
from gpuwise.plan.currency import default_rates
from gpuwise.plan.export import assumptions
from gpuwise.plan.planner import make_plan
from gpuwise.report.document import Bullets, Code, Document, Heading, Paragraph
from gpuwise.report.formats import render
from gpuwise.report.views.plan import plan_view
from tests.report.zh_check import ENGLISH_RUN, english_runs, written_texts

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TRAINING = ["llm-7b-pretrain-1t.yaml", "llm-13b-finetune.yaml", "resnet50-imagenet.yaml"]
OPTIONS = {"defaults": None, "plan-options": EXAMPLES / "plan-options.yaml"}
CASES = [(w, o) for w in TRAINING for o in OPTIONS]
NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?%?")


def _plan(workload: str, options: str, lang: str):
    i18n.set_language(lang)
    try:
        return make_plan(EXAMPLES / workload, OPTIONS[options])
    finally:
        i18n.set_language("zh-CN")


def _quoted(plan) -> list[str]:
    """What the plan quotes rather than writes (english_runs removes the longest first)."""
    out = [r.label for r in plan.rows] + [plan.workload.name or "", str(plan.workload_path)]
    out += [f"{u.provider} {u.instance_type}" for u in plan.unpriced]
    out += [source for _usd, _as_of, source in default_rates().values()]  # the currency note cites it
    out += [str(a["source"]) for a in assumptions(plan)]  # --verbose: the assumptions' citations
    out += data_paths.all_sources()  # the data-staging lines cite the path limits
    return out


def _html_runs(plan) -> list[str]:
    """English runs in the visible text of the HTML page (tables, headings and the SVG charts' labels)."""
    page = render(plan_view(plan), "html")
    page = re.sub(r"<script.*?</script>|<style.*?</style>", " ", page, flags=re.S)
    text = html.unescape(re.sub(r"<[^>]+>", "\n", page))
    for q in sorted({q for q in _quoted(plan) if q}, key=len, reverse=True):
        text = text.replace(q, " ")
    return ENGLISH_RUN.findall(re.sub(r"https?://\S+", " ", text))


@pytest.mark.parametrize("verbose", [False, True])
@pytest.mark.parametrize(("workload", "options"), CASES)
def test_plan_in_chinese_leaves_no_english_sentence(zh, workload, options, verbose):
    plan = _plan(workload, options, "zh-CN")
    runs = english_runs(plan_view(plan, verbose=verbose), _quoted(plan))
    assert not runs, f"untranslated text (wrap it in _() and translate it): {runs}"


@pytest.mark.parametrize(("workload", "options"), CASES)
def test_plan_html_in_chinese_leaves_no_english_sentence(zh, workload, options):
    plan = _plan(workload, options, "zh-CN")
    assert not _html_runs(plan)
    assert "什么情况会改变结论：" in render(plan_view(plan), "html")  # the tornado chart's title


def test_the_english_check_catches_the_english_plan(zh):
    """The checks above must be able to fail: the same plans in English are full of English runs."""
    for workload, options in CASES:
        plan = _plan(workload, options, "en")
        i18n.set_language("en")
        assert len(english_runs(plan_view(plan), _quoted(plan))) > 10, (workload, options)
        assert len(_html_runs(plan)) > 10, (workload, options)
        i18n.set_language("zh-CN")


@pytest.mark.parametrize(("workload", "options"), CASES)
def test_chinese_plan_keeps_the_decision_picks_and_numbers(zh, workload, options):
    english, chinese = _plan(workload, options, "en"), _plan(workload, options, "zh-CN")
    i18n.set_language("en")
    en_text = render(plan_view(english, verbose=True), "text", width=80)
    i18n.set_language("zh-CN")
    zh_text = render(plan_view(chinese, verbose=True), "text", width=80)
    d_en, d_zh = english.decision, chinese.decision
    assert (d_zh.verdict, d_zh.best_cloud, d_zh.best_onprem) == (
        d_en.verdict,
        d_en.best_cloud,
        d_en.best_onprem,
    )
    assert [(r.kind, r.favours, r.numbers) for r in d_zh.reasons] == [
        (r.kind, r.favours, r.numbers) for r in d_en.reasons
    ]
    assert [(f.kind, f.numbers) for f in d_zh.flips] == [(f.kind, f.numbers) for f in d_en.flips]
    assert d_zh.rent == d_en.rent and d_zh.buy == d_en.buy  # the same offer and build, nodes and costs
    assert (english.chosen == chinese.chosen).all()
    assert "建议：" in zh_text and "Recommendation" not in zh_text
    assert set(NUMBER.findall(en_text)) - set(NUMBER.findall(zh_text)) == set()
    for pick in (d_zh.rent, d_zh.buy):
        if pick is not None:
            assert pick.name in zh_text.replace("\n", " ") or pick.name in re.sub(r"\s+", "", zh_text)


@pytest.mark.parametrize(("workload", "options"), CASES)
def test_chinese_plan_fits_80_columns_and_nothing_is_cut(zh, workload, options):
    """CJK characters take two columns; Chinese lines break between characters, never through a Latin word."""
    doc = plan_view(_plan(workload, options, "zh-CN"), verbose=True)
    out = render(doc, "text", width=80)
    code = {line for b in doc.blocks if isinstance(b, Code) for line in b.lines}
    for line in out.splitlines():
        if not any(c in line for c in code):
            assert cell_len(line) <= 80, line
    assert "…" not in out  # Rich's mark for a cut cell
    flat = re.sub(r"\s+", "", out)
    for block in doc.blocks:
        if isinstance(block, (Heading, Paragraph, Bullets)):  # table cells share lines with their row
            for text in written_texts(Document(title="", blocks=[block])):
                assert re.sub(r"\s+", "", text) in flat, text  # every character, in order
    words = {w for line in out.splitlines() for w in re.findall(r"[A-Za-z][A-Za-z0-9_.\-]*", line)}
    tables = [t for t in written_texts(doc) if t]
    latin = {
        w for t in tables for w in re.findall(r"[A-Za-z][A-Za-z0-9_.\-]{3,}", re.sub(r"https?://\S+", " ", t))
    }
    broken = {w for w in latin if cell_len(w) < 30 and w not in words}
    assert not broken, sorted(broken)[:5]  # a Latin word split across two lines


def test_plan_json_keeps_its_keys_and_enum_values(zh):
    def shape(node):
        if isinstance(node, dict):
            return {k: shape(v) for k, v in node.items()}
        if isinstance(node, list):
            return [shape(v) for v in node]
        return type(node).__name__

    for workload, options in CASES:
        en = json.loads(json.dumps(plan_view(_plan(workload, options, "en")).data))
        zh_ = json.loads(json.dumps(plan_view(_plan(workload, options, "zh-CN")).data))
        assert shape(zh_) == shape(en) and zh_["schema"] == en["schema"]
        d_en, d_zh = en["decision"], zh_["decision"]
        assert d_zh["verdict"] == d_en["verdict"]
        assert [(r["kind"], r["favours"]) for r in d_zh["reasons"]] == [
            (r["kind"], r["favours"]) for r in d_en["reasons"]
        ]
        for side in ("rent", "buy"):
            keep = ("side", "name", "provider", "instance_type", "region", "pricing", "nodes", "cost_per_run")
            assert [(d_zh[side] or {}).get(k) for k in keep] == [(d_en[side] or {}).get(k) for k in keep]
        # the sentences are computed in English and worded only when shown: the JSON is the same
        assert zh_ == en


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gpuwise.cli", *args], capture_output=True, text=True, timeout=300
    )


def test_cli_plan_in_chinese():
    r = _cli(
        "--lang",
        "zh-CN",
        "plan",
        str(EXAMPLES / "llm-7b-pretrain-1t.yaml"),
        "--options",
        str(OPTIONS["plan-options"]),
    )
    assert r.returncode == 0, r.stderr
    assert "建议：混合方案" in r.stdout and "什么情况会改变结论" in r.stdout
    assert "Recommendation" not in r.stdout and "What would flip it" not in r.stdout


@pytest.mark.parametrize(
    ("workload", "args", "says"),
    [
        ("llm-7b-pretrain-1t.yaml", ["--sweep", "nodes=1,x"], "节点数必须是整数"),
        ("bad.yaml", [], "三者必须且只能给出一个"),
        ("bad-jurisdiction.yaml", [], "不是 gpuwise 已知的司法管辖区"),
    ],
)
def test_plan_errors_in_chinese_end_with_the_fix(tmp_path, workload, args, says):
    text = (EXAMPLES / "llm-7b-pretrain-1t.yaml").read_text(encoding="utf-8")
    (tmp_path / "bad.yaml").write_text(text.replace("training:\n", "training:\n  samples: 1000\n", 1))
    (tmp_path / "bad-jurisdiction.yaml").write_text(
        text.replace("org:\n", "org:\n  jurisdiction: atlantis\n", 1)
    )
    path = EXAMPLES / workload if workload.startswith("llm") else tmp_path / workload
    r = _cli("--lang", "zh-CN", "plan", str(path), *args)
    assert r.returncode == 3 and "Traceback" not in r.stderr, r.stderr
    assert says in r.stderr and "解决方法：" in r.stderr


def test_exclusions_and_calibration_notes_in_chinese(zh, tmp_path):
    """An org in China (export rules and data residency leave options out) calibrated from a recorded bench
    run: the exclusion table, the rules and the calibration notes are Chinese; the rules' citations,
    the measurement names and the offers' names are quoted."""
    text = (EXAMPLES / "llm-13b-finetune.yaml").read_text(encoding="utf-8")
    workload = tmp_path / "cn.yaml"
    workload.write_text(text.replace("org:\n", "org:\n  jurisdiction: cn\n", 1), encoding="utf-8")
    bench = Path(__file__).resolve().parents[1] / "captures" / "h200-1gpu-kvm-vm.bench-quick.json"
    plan = make_plan(workload, None, bench)
    assert plan.excluded and plan.calibration is not None and plan.calibration.used
    quoted = _quoted(plan) + [e.name for e in plan.excluded] + [e.source for e in plan.excluded]
    doc = plan_view(plan)
    assert not english_runs(doc, quoted)
    out = render(doc, "text", width=80)
    assert "本组织不能使用的方案" in out and "来自 H200 的校准" in out and "美国出口管制" in out
    assert max(cell_len(line) for line in out.splitlines()) <= 80
