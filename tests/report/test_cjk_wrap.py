"""Line breaking of Chinese text in the terminal renderer (report/formats/_cjk.py)."""

from __future__ import annotations

from io import StringIO

from rich.console import Console
from rich.padding import Padding

from gpuwise.report.formats._cjk import WrapText, break_offsets, widest_piece


def _lines(text: str, width: int) -> list[str]:
    buf = StringIO()
    # through Padding, as the text renderer prints it (console.print would join it into a plain Text)
    Console(file=buf, width=width, no_color=True).print(Padding(WrapText(text), 0))
    return [line.rstrip() for line in buf.getvalue().splitlines()]


def test_chinese_breaks_between_characters_and_latin_words_stay_whole():
    text = "RDMA（InfiniBand/RoCE、GPUDirect）需要注册锁页内存，锁定内存限制太小时会失败；DataLoader 的锁页缓冲区也计入其中。"
    for width in (20, 33, 47):
        lines = _lines(text, width)
        assert "".join(lines).replace(" ", "") == text.replace(" ", "")
        assert all(sum(2 if ord(ch) > 0x2E80 else 1 for ch in line) <= width for line in lines)
        assert any("DataLoader" in line for line in lines)  # never "Dat" + "aLoader"


def test_closing_punctuation_never_starts_a_line():
    text = "一二三四五六七八九，十一二三。"
    for width in range(4, 30):
        assert not any(line.startswith(("，", "。")) for line in _lines(text, width))


def test_english_takes_rich_own_path():
    text = "persistence mode is off on 8 of 8 GPUs, so every new CUDA process pays the initialisation"
    buf = StringIO()
    Console(file=buf, width=30, no_color=True).print(text)
    assert _lines(text, 30) == [line.rstrip() for line in buf.getvalue().splitlines()]


def test_widest_piece_and_offsets():
    assert widest_piece("显存带宽 DataLoader") == len("DataLoader")
    assert widest_piece("显存带宽") == 2  # one CJK character is two cells
    assert break_offsets("显存带宽", 4) == [2]
    assert break_offsets("short", 80) == []


def test_opening_punctuation_never_ends_a_line():
    text = "按量计费的峰值折减（见下文的 p95 与峰谷比）以及《说明》中的「预留」容量"
    for width in range(6, 40):
        lines = _lines(text, width)
        assert "".join(lines).replace(" ", "") == text.replace(" ", "")
        assert not any(line.endswith(("（", "《", "「")) for line in lines), (width, lines)
    # "一二三" | "（四五）": the bracket goes with what it opens
    assert break_offsets("一二三（四五）", 8) == [3]


def test_opening_punctuation_never_ends_a_line_and_closing_stays_after_a_latin_word():
    text = "预估费用未知（用 --plan 获取其 TCO）：删除命令 gpuwise launch --down slurm:JOBID（或：scancel JOBID）"
    for width in range(12, 60):
        lines = _lines(text, width)
        assert "".join(lines).replace(" ", "") == text.replace(" ", ""), width
        assert not any(line.endswith("（") for line in lines), (width, lines)
        assert not any(line.startswith(("）", "：")) for line in lines), (width, lines)


def test_rich_copies_of_chinese_text_keep_breaking_between_characters():
    """Text + Text, join and copy build new texts (the text renderer's table records do): they must still
    break Chinese between characters, not move a whole sentence to the next line or fold a URL."""
    item = WrapText("原因与依据: ") + WrapText(
        "源环境没有可比较的版本。https://docs.nvidia.com/deploy/cuda-compatibility/"
    )
    assert isinstance(item, WrapText) and isinstance(WrapText(" ").join([item, item]), WrapText)
    buf = StringIO()
    Console(file=buf, width=60, no_color=True).print(Padding(item, 0))
    lines = [line.rstrip() for line in buf.getvalue().splitlines()]
    assert lines == [
        "原因与依据: 源环境没有可比较的版本。",
        "https://docs.nvidia.com/deploy/cuda-compatibility/",
    ]


def test_a_chinese_table_column_is_not_squeezed_to_a_character_a_line():
    from gpuwise.report.document import Column, Document, Table
    from gpuwise.report.formats import render

    url = "https://docs.nvidia.com/deeplearning/nccl/release-notes/index.html"
    table = Table([Column(h) for h in ("检查结果", "项目", "源环境", "目标环境", "原因与依据")],
                  [["未知", "NCCL（torch 自带）", "—", "2.21.5", f"源环境没有可比较的版本。{url}"]])  # fmt: skip
    out = render(Document(title="", blocks=[table]), "text", width=100)
    assert "目标环境" in out and "NCCL（torch 自带）" in out, out  # one piece each, or one record per row
