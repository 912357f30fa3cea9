"""--format html: every block type renders, text is escaped, no external resource, charts are SVG;
and the page opens in headless Chromium with the network cut off (skipped without chromium)."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from gpuwise.report.document import (
    Bullets,
    Chart,
    Code,
    Column,
    Document,
    Heading,
    KeyValues,
    Paragraph,
    Series,
    Styled,
    Table,
)
from gpuwise.report.formats import format_names, get_renderer
from gpuwise.report.formats._svg import nice_ticks


def every_block_document() -> Document:
    layers = ["matmul_bf16", "hbm_copy", "nccl_allreduce"]
    pct = [71.5, 88.25, 42.0]
    return Document(
        title="Bench <report> & co",
        blocks=[
            Heading("Bench <report> & co", 1),
            Paragraph("Measured on <host> & friends", style="warn"),
            Paragraph("plain paragraph"),
            KeyValues([("GPU", "NVIDIA H200"), ("driver", Styled("570.86.15", "ok"))], title="Facts"),
            Table(
                [Column("layer"), Column("% of peak", "right"), Column("TFLOP/s", "right")],
                [
                    [layer, f"{p:.1f}", Styled(f"{p * 9.89:.1f}", "fail")]
                    for layer, p in zip(layers, pct, strict=True)
                ],
                title="Per layer",
                caption="— means not measured",
            ),
            Code(["export NCCL_DEBUG=INFO", "echo '<script>alert(1)</script>'"], lang="bash"),
            Bullets(["first", Styled("second <b>", "bold")]),
            Chart(
                "bar",
                "% of peak per layer",
                "layer",
                "% of peak",
                [Series("this run", layers, pct, err=[1.5, None, 3.0])],
                band=(60.0, 90.0),
            ),
            Chart(
                "line",
                "Cost vs nodes",
                "nodes",
                "USD",
                [
                    Series("rent", [1, 2, 4, 8], [10.0, 19.0, None, 70.0]),
                    Series("build", [1, 2, 4, 8], [30.0, 35.0, 45.0, 60.0], err=[2.0, 2.0, 3.0, 4.0]),
                ],
            ),
            Chart(
                "scatter",
                "Step time per node",
                "node",
                "ms",
                [Series("nodes", ["n1", "n2", "n3"], [101.0, 99.5, 160.0])],
            ),
        ],
        data={"schema": "gpuwise-test/1"},
    )


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def _render() -> str:
    return get_renderer("html")(every_block_document())


def test_html_is_a_registered_format():
    assert "html" in format_names()
    assert get_renderer("html").media_type == "text/html"


def test_every_block_renders_and_every_table_number_appears():
    html = _render()
    page = _Collector()
    page.feed(html)
    tags = [t for t, _ in page.tags]
    for tag in ("h1", "p", "dl", "table", "pre", "ul", "figure", "svg"):
        assert tag in tags, tag
    assert tags.count("svg") == 3
    text = "".join(page.text)
    for p in (71.5, 88.25, 42.0):
        assert f"{p:.1f}" in text and f"{p * 9.89:.1f}" in text
    assert "NVIDIA H200" in text and "570.86.15" in text and "— means not measured" in text


def test_text_is_escaped():
    html = _render()
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "&lt;host&gt; &amp; friends" in html and "Bench &lt;report&gt; &amp; co" in html
    assert "<b>" not in html
    assert "<script" not in html.lower()  # no JavaScript at all


def test_no_external_resource_reference():
    page = _Collector()
    page.feed(_render())
    for tag, attrs in page.tags:
        for name in ("src", "href", "action", "data"):
            value = attrs.get(name) or ""
            assert not re.match(r"\s*(https?:)?//", value), (tag, name, value)
        # the only URL allowed is the SVG namespace identifier, which browsers never fetch
        assert all("http" not in v for k, v in attrs.items() if k != "xmlns" and v), (tag, attrs)
    assert "@import" not in _render() and "url(" not in _render()


def test_chart_draws_error_bars_band_and_legend():
    html = _render()
    assert html.count('class="err"') == 2 + 4  # bar: 2 errors given; line "build": 4
    assert 'class="band"' in html and "typical range" in html
    for name in ("this run", "rent", "build", "nodes"):
        assert f'data-series="{name}"' in html
    assert html.count("<polyline") == 2  # rent (None skipped, still 3 points) and build


def test_a_long_legend_wraps_instead_of_running_off_the_chart():
    from gpuwise.report.formats._svg import WIDTH, chart_svg

    names = [f"option number {i} with a long descriptive name" for i in range(6)]
    svg = chart_svg(Chart("line", "t", "x", "y", [Series(n, [1, 2], [1.0, 2.0]) for n in names]))
    xs = [float(x) for x in re.findall(r'<text x="([\d.]+)"[^>]*class="legend-label"', svg)]
    assert len(xs) == 6 and max(xs) + 6.5 * len(names[0]) <= WIDTH
    assert len(set(re.findall(r'class="legend-label"', svg))) == 1


def test_nice_ticks_cover_the_range():
    ticks = nice_ticks(0.0, 88.25)
    assert ticks[0] <= 0.0 and ticks[-1] >= 88.25 and 4 <= len(ticks) <= 11
    assert nice_ticks(5.0, 5.0)[-1] > 5.0  # a flat series still gets an axis


def test_other_formats_skip_charts_but_keep_table_numbers():
    doc = every_block_document()
    for fmt in ("text", "md"):
        out = get_renderer(fmt)(doc, width=100)
        assert "71.5" in out and "<svg" not in out


# ---- headless Chromium (Debian package `chromium`, installed by scripts/install-system-deps.sh) ----

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NO_NETWORK = [  # every host resolves to nothing and every proxy connection goes to a closed port
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=127.0.0.1:9",
]


def _chromium(page: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [
        CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
        f"--user-data-dir={tmp_path / 'gwreports-chrome'}", "--window-size=1280,800", *NO_NETWORK,
        *args, page.as_uri(),
    ]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, timeout=90)


def open_in_chromium(html: str, tmp_path: Path, name: str) -> tuple[str, Path]:
    """Write `html`, dump its DOM and screenshot it at 1280x800; (dom, png path). The PNG stays in
    pytest's tmp dir as the artifact for this report type."""
    page = tmp_path / f"{name}.html"
    page.write_text(html, encoding="utf-8")
    dom = _chromium(page, tmp_path, "--dump-dom", "--enable-logging=stderr", "--v=0")
    assert dom.returncode == 0, dom.stderr[-2000:]
    console = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, console  # no console message: no script error, no blocked request
    png = tmp_path / f"{name}.png"
    shot = _chromium(page, tmp_path, f"--screenshot={png}")
    assert shot.returncode == 0 and png.is_file(), shot.stderr[-2000:]
    return dom.stdout, png


def assert_page_drawn(dom: str, png: Path, charts: int) -> None:
    image = pytest.importorskip("PIL.Image")
    assert "<h1>" in dom or "<h1 " in dom  # the page loaded and was parsed
    figures = re.findall(r'<figure class="chart".*?</figure>', dom, flags=re.S)
    assert len(figures) == charts
    for figure in figures:  # every chart container holds drawn SVG marks
        assert "<svg" in figure and re.search(r"<(rect|circle|polyline)\b", figure)
    with image.open(png) as shot:
        assert shot.size == (1280, 800)
        colors = shot.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colors is not None and len(colors) > 20  # not blank: text, table rules, chart colours
    background = max(colors)[0]
    assert background < 1280 * 800 * 0.97


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (scripts/install-system-deps.sh)")
def test_chromium_check_catches_an_external_request(tmp_path):
    bad = _render().replace("</h1>", '</h1><img src="http://gwreports.invalid/x.png">', 1)
    with pytest.raises(AssertionError, match="gwreports.invalid"):
        open_in_chromium(bad, tmp_path, "external-request")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (scripts/install-system-deps.sh)")
def test_page_opens_in_headless_chromium_without_network(tmp_path):
    dom, png = open_in_chromium(_render(), tmp_path, "every-block")
    assert_page_drawn(dom, png, charts=3)
