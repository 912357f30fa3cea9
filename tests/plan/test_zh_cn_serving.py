"""`--lang zh-CN` on the serving plan (`gpuwise plan` of a `kind: inference` workload): the shipped
serving examples are Chinese throughout in text and HTML, keep their decision and every number, and
the Chinese text fits 80 columns.

"Chinese throughout" is tests/report/zh_check.py's check: no run of 4 or more English words in what
gpuwise wrote. Quoted, not written, are the user's names (workload, model, on-prem builds), the
provider and instance names of the offers, the ids of the published benchmarks, the sources of the
packaged assumptions (they cite English documents), and the notes that other modules write
(OTHER_SCOPES: the exchange-rate line of plan/currency.py and the skipped default builds of
plan/planner.py, translated with the training plan).
"""

from __future__ import annotations

import html as htmllib
import re
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.cells import cell_len

from gpuwise import i18n
from gpuwise.catalog.gpu_support import precisions
from gpuwise.errors import DataValidationError
from gpuwise.i18n import word
from gpuwise.report.document import Code, Table
from gpuwise.report.formats import render
from tests.report.zh_check import ENGLISH_RUN, english_runs, written_texts

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SERVING = ["llm-chat-serving.yaml", "image-api-flat.yaml"]
OPTIONS = {"shipped options": EXAMPLES / "plan-options.yaml", "no options": None}
# notes written by modules outside plan/serving (translated with the training plan, issue 16)
OTHER_SCOPES = (re.compile(r"^1 [A-Z]{3} = "), re.compile(r"^default build "))
# JSON values written for people: they follow --lang (as doctor's titles do); everything else is equal
TEXT_KEYS = {"title", "summary", "text", "reason", "source", "flips", "notes"}
NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")


def _plan(workload: str, options: Path | None, lang: str):
    from gpuwise.plan.serving.planner import make_serving_plan

    i18n.set_language(lang)
    return make_serving_plan(EXAMPLES / workload, options)


def _doc(plan, verbose: bool = True):
    from gpuwise.report.views.serving import serving_view

    return serving_view(plan, verbose=verbose)


def _quoted(plan) -> list[str]:
    """What the serving plan quotes rather than writes."""
    wl = plan.workload
    out = [wl.name, wl.model.name, plan.workload_path, str(EXAMPLES)]
    for h in plan.hardware:
        out += [h.label, h.key, h.gpu]
        support = precisions(h.gpu)  # a catalog source quoted in a precision note
        out += [support.source] if support else []
    out += [c.id for c in plan.checks]
    out += [plan.defaults.source(k) for k in plan.defaults.names() if k not in plan.defaults.overridden]
    out += [word(n) for n in plan.notes if any(p.search(n) for p in OTHER_SCOPES)]
    return [q for q in out if q]


class _VisibleText(HTMLParser):
    """The text a reader of the HTML page sees (style sheets left out; SVG text kept)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        self._skip += tag in ("style", "script")

    def handle_endtag(self, tag):
        self._skip -= tag in ("style", "script")

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def _html_english_runs(doc, quoted: list[str]) -> list[str]:
    page = render(doc, "html")
    parser = _VisibleText()
    parser.feed(page if isinstance(page, str) else page.decode("utf-8"))
    text = htmllib.unescape("\n".join(parser.parts))
    for code in (line for b in doc.blocks if isinstance(b, Code) for line in b.lines):
        text = text.replace(code, " ")
    for q in sorted(set(quoted), key=len, reverse=True):
        text = text.replace(q, " ")
    text = re.sub(r"https?://\S+", " ", text)
    return [run for line in text.splitlines() for run in ENGLISH_RUN.findall(line)]


CASES = [(w, o) for w in SERVING for o in OPTIONS]


@pytest.mark.parametrize(("workload", "options"), CASES)
def test_serving_plan_in_chinese_leaves_no_english_sentence(zh, workload, options):
    plan = _plan(workload, OPTIONS[options], "zh-CN")
    doc = _doc(plan)
    quoted = _quoted(plan)
    assert not english_runs(doc, quoted), "untranslated text (wrap it in _() and translate it)"
    assert not _html_english_runs(doc, quoted), "untranslated text in the HTML page"
    page = render(doc, "html")
    assert 'lang="zh-CN"' in (page if isinstance(page, str) else page.decode())


@pytest.mark.parametrize("workload", SERVING)
def test_the_english_check_catches_english(workload):
    """The checks above can fail: the same plan in English is full of English runs, text and HTML."""
    plan = _plan(workload, OPTIONS["shipped options"], "en")
    doc = _doc(plan)
    assert len(english_runs(doc, _quoted(plan))) > 10
    assert len(_html_english_runs(doc, _quoted(plan))) > 10


@pytest.mark.parametrize("workload", SERVING)
def test_chinese_plan_keeps_the_decision_and_every_number(zh, workload):
    """The decision is computed from kinds and numbers, never from wording: the same verdict, reasons,
    flips and figures in both languages; the JSON keeps its keys and enumerations."""
    options = OPTIONS["shipped options"]
    english, chinese = _plan(workload, options, "en"), _plan(workload, options, "zh-CN")
    d_en, d_zh = english.decision, chinese.decision
    assert d_zh.verdict == d_en.verdict
    assert [(r.kind, r.favours, r.numbers) for r in d_zh.reasons] == [
        (r.kind, r.favours, r.numbers) for r in d_en.reasons
    ]
    assert [(f.kind, f.numbers) for f in d_zh.flips] == [(f.kind, f.numbers) for f in d_en.flips]
    assert [r.text for r in d_zh.reasons] == [r.text for r in d_en.reasons]  # English until shown
    assert [word(r.text) for r in d_zh.reasons] != [r.text for r in d_en.reasons]  # and then translated

    i18n.set_language("en")
    en_text = render(_doc(english), "text", width=100)
    en_json = _doc(english).data
    i18n.set_language("zh-CN")
    zh_text = render(_doc(chinese), "text", width=100)
    zh_json = _doc(chinese).data
    assert "建议：" in zh_text and "Recommendation" not in zh_text
    missing = set(NUMBER.findall(en_text)) - set(NUMBER.findall(zh_text))
    assert not missing, sorted(missing)

    def numbers_and_enums(node, key=""):
        """The JSON with its text for people (which follows the language) blanked: keys, numbers,
        ids and enumerations (strategy, side, kind, metric, verdict, limit) must be equal."""
        if isinstance(node, dict):
            return {k: numbers_and_enums(v, k) for k, v in node.items()}
        if isinstance(node, list):
            return [numbers_and_enums(v, key) for v in node]
        return "<text>" if isinstance(node, str) and key in TEXT_KEYS else node

    assert numbers_and_enums(zh_json) == numbers_and_enums(en_json)
    assert [c["limit"] for c in zh_json["capacity"]] == [c["limit"] for c in en_json["capacity"]]


@pytest.mark.parametrize(("workload", "options"), CASES)
@pytest.mark.parametrize("verbose", [False, True])
def test_chinese_serving_text_fits_80_columns_and_nothing_is_cut(zh, workload, options, verbose):
    """CJK characters take two columns: every line fits, nothing is cut with "…", every character of
    the view's prose is there in order, and no Latin word (an instance type, a GPU, a number of a
    table cell) is split over two lines."""
    doc = _doc(_plan(workload, OPTIONS[options], "zh-CN"), verbose=verbose)
    out = render(doc, "text", width=80)
    code = {line for b in doc.blocks if isinstance(b, Code) for line in b.lines}
    for line in out.splitlines():
        if not any(c in line for c in code):
            assert cell_len(line) <= 80, line
    assert "…" not in out
    flat = re.sub(r"\s+", "", out)
    prose = SimpleNamespace(blocks=[b for b in doc.blocks if not isinstance(b, Table)])  # cells interleave
    for text in written_texts(prose):
        assert re.sub(r"\s+", "", text) in flat, text
    words = {w for t in written_texts(doc) for w in re.findall(r"[A-Za-z][A-Za-z0-9_.\-]{3,}", t)}
    on_lines = {w for line in out.splitlines() for w in re.findall(r"[A-Za-z][A-Za-z0-9_.\-]*", line)}
    assert not {w for w in words if cell_len(w) < 60 and w not in on_lines}


def _csv_error(tmp_path: Path, rows: list[str]) -> DataValidationError:
    from gpuwise.plan.serving.traffic import demand_week
    from gpuwise.plan.serving.workload import Traffic

    (tmp_path / "traffic.csv").write_text("timestamp,rps\n" + "\n".join(rows) + "\n")
    with pytest.raises(DataValidationError) as err:
        demand_week(Traffic(csv="traffic.csv"), tmp_path)
    return err.value


def test_traffic_csv_errors_in_chinese_keep_the_line_and_the_fix(zh, tmp_path):
    gap = _csv_error(tmp_path, ["2026-11-02T00:00,5", "2026-11-02T03:00,5"])
    assert gap.line == 3 and "缺少 2 小时" in word(gap.text()) and "补齐" in word(gap.fix)
    short = _csv_error(tmp_path, ["2026-11-02T00:00,5"])
    assert "只有 1 个小时行" in word(short.text()) and "timestamp,rps" in word(short.fix)
    assert not english_runs_in(word(gap.text()), word(gap.fix), word(short.text()), word(short.fix))


def english_runs_in(*texts: str) -> list[str]:
    return [run for t in texts for run in ENGLISH_RUN.findall(re.sub(r"\S*/\S*", " ", t))]


def test_workload_mistakes_in_chinese(zh, tmp_path):
    from gpuwise.plan.serving.workload import load_inference_workload

    text = (EXAMPLES / "llm-chat-serving.yaml").read_text().replace("  valley_rps: 300", "  valley_rps: 3000")
    path = tmp_path / "w.yaml"
    path.write_text(text)
    with pytest.raises(DataValidationError) as err:
        load_inference_workload(path)
    assert "valley_rps 大于 peak_rps" in word(err.value.text())
    assert "参见 examples/llm-chat-serving.yaml" in word(err.value.fix)
