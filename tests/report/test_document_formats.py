"""The Document, its three renderers and the shared output options (commands/output.py)."""

from __future__ import annotations

import json

import pytest

from gpuwise.errors import UserInputError
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

PRICES = ["$31,464.00", "¥1,234,567.89", "$3.50"]


def _wide_doc() -> Document:
    """A table that cannot fit 80 columns even with every name wrapped: it must not be cut."""
    cols = [Column("instance")] + [Column(f"price {i}", "right") for i in range(9)]
    rows = [[f"p5.48xlarge-{n}"] + [PRICES[(n + i) % 3] for i in range(9)] for n in range(3)]
    return Document(
        title="wide",
        blocks=[
            Heading("Offers [bold]"),  # brackets print literally
            Table(cols, rows, title="Cloud GPU offers", caption="— = no sourced price"),
        ],
        data={"schema": "test/1", "prices": [31464.0]},
    )


def _mixed_doc() -> Document:
    return Document(
        title="mixed",
        blocks=[
            Heading("gpuwise test — host-1"),
            Paragraph("verdict: 2 warning(s) to look at (exit 1)", style="warn"),
            KeyValues([("memory", "125.9 GiB"), ("swap", Styled("—", "dim"))], title="CPU and memory"),
            Table(
                [Column("name"), Column("value", "right")],
                [["matmul | bf16", "712.4 TFLOP/s"], [Styled("h2d", "fail"), "50.1 GB/s"]],
            ),
            Code(["nvidia-smi -pm 1", "export NCCL_ALGO=Ring"], lang="sh"),
            Bullets(["first", Styled("second", "ok")]),
            Chart("bar", "busbw", "size", "GB/s", [Series("all_reduce", [1, 2], [3.0, None])]),
        ],
        data={"schema": "test/1", "x": 1},
    )


def test_registry_lists_the_shipped_formats_and_suggests_a_near_name():
    assert {"json", "md", "text"} <= set(format_names())
    assert get_renderer("MD").name == "md"
    with pytest.raises(UserInputError, match="did you mean 'json'"):
        get_renderer("jsn")


def test_text_folds_a_too_wide_table_into_records_and_cuts_nothing():
    text = get_renderer("text").render(_wide_doc(), width=80)
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    for price in PRICES:
        assert any(price in line for line in text.splitlines()), price
    assert "Offers [bold]" in text and "p5.48xlarge-2" in text and "— = no sourced price" in text
    # at 200 columns the same table is a table: one row per instance
    wide = get_renderer("text").render(_wide_doc(), width=200)
    assert sum("p5.48xlarge" in line for line in wide.splitlines()) == 3


def test_text_wraps_names_at_spaces_not_numbers():
    long_name = "an option with a rather long descriptive name that has to wrap somewhere"
    doc = Document(
        "t",
        [
            Table(
                [Column("option"), Column("cost", "right"), Column("time", "right")],
                [[long_name, "$12.3k", "2.5 d"]],
            )
        ],
    )
    text = get_renderer("text").render(doc, width=40)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 40
    assert any("$12.3k" in line for line in lines) and any("2.5 d" in line for line in lines)
    words = " ".join(lines).split()
    for word in long_name.split():
        assert word in words  # wrapped between words, never inside one


def test_text_renders_every_block_and_colours_only_when_asked():
    doc = _mixed_doc()
    plain = get_renderer("text").render(doc, width=80)
    assert "\x1b[" not in plain
    for needle in ("host-1", "verdict: 2 warning(s)", "125.9 GiB", "matmul | bf16", "712.4 TFLOP/s"):
        assert needle in plain
    assert "    $ nvidia-smi -pm 1" in plain and "• second" in plain
    assert "all_reduce" not in plain  # charts are for graphical formats
    assert "\x1b[" in get_renderer("text").render(doc, width=80, color=True)


def test_code_lines_are_never_wrapped():
    cmd = "sudo nvidia-smi --applications-clocks=1593,1980 --id=0,1,2,3,4,5,6,7 && echo done-and-done"
    text = get_renderer("text").render(Document("t", [Code([cmd])]), width=40)
    assert cmd in text


def test_markdown_tables_escape_pipes_and_align_numbers():
    md = get_renderer("md").render(_mixed_doc())
    assert md.startswith("# gpuwise test — host-1\n")
    assert "| matmul \\| bf16 | 712.4 TFLOP/s |" in md and "|---|---:|" in md
    assert "**CPU and memory**" in md and "- memory: 125.9 GiB" in md
    assert "```sh\nnvidia-smi -pm 1\nexport NCCL_ALGO=Ring\n```" in md
    assert "- second" in md and "all_reduce" not in md


def test_json_prints_the_data_not_the_blocks():
    out = get_renderer("json").render(_mixed_doc())
    assert json.loads(out) == {"schema": "test/1", "x": 1} and out.endswith("\n")


def test_output_format_and_the_json_alias():
    from gpuwise.commands.output import output_format

    assert output_format("text", False) == "text"
    assert output_format("text", True) == "json"
    assert output_format("md", False) == "md"
    with pytest.raises(UserInputError, match="--json and --format md"):
        output_format("md", True)
    with pytest.raises(UserInputError, match="To fix: .*text"):
        output_format("htm", False)


def test_emit_writes_atomically_at_file_width(tmp_path, capsys):
    from gpuwise.commands.output import check_output, emit

    target = tmp_path / "sub" / "out.txt"
    check_output(target)
    emit(_wide_doc(), "text", target, note="3 offers")
    err = capsys.readouterr().err
    assert f"wrote {target} — 3 offers" in err
    text = target.read_text(encoding="utf-8")
    assert max(len(line) for line in text.splitlines()) <= 100 and "\x1b[" not in text
    assert not [p for p in target.parent.iterdir() if p.name != "out.txt"]  # no temp file left
    with pytest.raises(UserInputError, match="is a directory"):
        check_output(tmp_path)


def test_emit_to_stdout_follows_columns(monkeypatch, capsys):
    from gpuwise.commands.output import emit

    monkeypatch.setenv("COLUMNS", "60")
    emit(_wide_doc(), "text", None)
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 60 and "$31,464.00" in out
    emit(_mixed_doc(), "json", None)
    assert json.loads(capsys.readouterr().out)["x"] == 1


def test_markdown_escapes_emphasis_but_keeps_code_spans():
    doc = Document("t", [Paragraph("NCCL_* environment <none>; run `ls /dev/nvidia*` first")])
    md = get_renderer("md").render(doc)
    assert "NCCL_\\* environment &lt;none>; run `ls /dev/nvidia*` first" in md
    assert get_renderer("md").render(Document("t", [Paragraph("a ` b*")])) == "a \\` b\\*\n"


def test_bench_view_tabulates_collectives_by_message_size():
    """Recorded on this CPU VM: `gpuwise bench --only collective --save FILE` (2 gloo ranks)."""
    from gpuwise.bench.report_file import read_bench_report
    from gpuwise.report.views.bench import bench_view
    from tests.conftest import CAPTURES

    report = read_bench_report(CAPTURES / "cpu-vm-kvm-docker.bench-collective.json", "x")
    doc = bench_view(report)
    (table,) = [b for b in doc.blocks if isinstance(b, Table) and "by message size" in (b.title or "")]
    (chart,) = [b for b in doc.blocks if isinstance(b, Chart)]
    allreduce = report.find("allreduce_busbw").extra["table"]
    assert len(table.rows) == len(allreduce) and table.rows[-1][0] == "16 MiB"
    assert chart.series[0].y == [r["busbw_gb_s"] for r in allreduce]  # the chart's numbers are the table's
    text = get_renderer("text").render(doc, width=80)
    assert "Collectives: busbw in GB/s by message size" in text and "16 MiB" in text
