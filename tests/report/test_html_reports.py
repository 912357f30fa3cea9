"""Every command's view as HTML: every cell a reader sees in text appears escaped in the page; one page
per report type opens in headless Chromium with its charts drawn (screenshots stay in tmp_path)."""

from __future__ import annotations

from html import escape
from pathlib import Path

import pytest

from gpuwise.report.document import Chart, Code, Document, cell_text, cells
from gpuwise.report.formats import get_renderer
from tests.report.test_80_columns import DOCS, _compare_doc
from tests.report.test_html_format import CHROMIUM, assert_page_drawn, open_in_chromium


def build(maker, tmp_path) -> Document:
    return _compare_doc(tmp_path) if maker == "tmp" else maker()


@pytest.mark.parametrize(("name", "maker"), DOCS, ids=[n for n, _ in DOCS])
def test_every_view_renders_as_html_with_every_cell(name, maker, tmp_path):
    doc = build(maker, tmp_path)
    html = get_renderer("html")(doc)
    missing = [cell_text(c) for c in cells(doc) if escape(cell_text(c)) not in html]
    assert not missing, missing[:5]
    for block in doc.blocks:
        if isinstance(block, Code):
            assert all(escape(line) in html for line in block.lines)
    assert html.count("<svg") == sum(isinstance(b, Chart) for b in doc.blocks)


REPORT_TYPES = {  # every report type that draws a chart: its page, from the 80-column test's documents
    "doctor h200 with bench": "doctor",
    "bench h200": "bench",
    "plan llm-7b-pretrain-1t.yaml + options": "plan",
    "tune": "tune",
    "profile": "profile",
    "fleet report (16 nodes)": "fleet",
    "history trend": "history-trend",
}


def bench_compare_doc(tmp_path) -> Document:
    """The recorded H200 bench against a copy of it 10% slower: measurements on both sides."""
    import json

    from gpuwise.report.compare import compare_files
    from gpuwise.report.views.compare import compare_view
    from tests.report.test_80_columns import BENCH_FILE

    slower = json.loads(BENCH_FILE.read_text())
    slower["hostname"] = "vm-b"
    for result in slower["results"]:
        if result.get("value"):
            result["value"] *= 0.9
    (tmp_path / "slower.json").write_text(json.dumps(slower))
    return compare_view(compare_files(BENCH_FILE, tmp_path / "slower.json"))


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory) -> Path:
    """Where one screenshot per report type is kept: $GPUWISE_ARTIFACTS (a CI artifact folder) or pytest's
    base temp dir (kept for the last three runs)."""
    import os

    folder = os.environ.get("GPUWISE_ARTIFACTS")
    out = Path(folder) / "html-screenshots" if folder else tmp_path_factory.getbasetemp() / "html-screenshots"
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (scripts/install-system-deps.sh)")
@pytest.mark.parametrize("short", [*REPORT_TYPES.values(), "compare"])
def test_each_report_type_opens_in_headless_chromium(short, tmp_path, screenshots):
    import shutil

    if short == "compare":
        doc = bench_compare_doc(tmp_path)
    else:
        doc = build(dict(DOCS)[next(n for n, s in REPORT_TYPES.items() if s == short)], tmp_path)
    charts = sum(isinstance(b, Chart) for b in doc.blocks)
    assert charts >= 1, f"{short} view draws no chart"
    dom, png = open_in_chromium(get_renderer("html")(doc), tmp_path, short)
    assert_page_drawn(dom, png, charts=charts)
    shutil.copy(png, screenshots / f"{short}.png")
