"""gpuwise/datafiles.py: the input reader and CSV reader every data file goes through (catalog, facts/data)."""

from __future__ import annotations

import pytest

from gpuwise.datafiles import read_input_text, read_rows
from gpuwise.errors import DataValidationError
from gpuwise.facts import sourcing


def test_comments_before_the_header_keep_file_line_numbers(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('# a comment, with "quotes\n\nkey,source\n# inside\na,paper\nb,\n')
    rows = list(read_rows(path, ("key", "source")))
    assert [(r.line, r.cells["key"]) for r in rows] == [(5, "a"), (6, "b")]
    with pytest.raises(DataValidationError) as err:
        rows[1].text("source", required=True)
    assert err.value.line == 6 and "'source'" in str(err.value)


def test_missing_column_after_comments_names_the_header_line(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("# explains the columns\nkey,sorce\na,b\n")
    with pytest.raises(DataValidationError, match='did you mean "source"') as err:
        list(read_rows(path, ("key", "source")))
    assert err.value.line == 2


@pytest.mark.parametrize(
    ("name", "required", "optional"),
    [
        ("monitoring_agents.csv", ("agent", "processes"), ()),
        ("network_fstypes.csv", ("fstype", "kind"), ()),
    ],
)
def test_facts_data_files_cite_a_source_on_every_row(name, required, optional):
    rows = sourcing.load_data_csv(name, required, optional)  # raises on a row without a source
    assert rows and all(r["source"] and all(r[c] for c in required) for r in rows)


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("key,Prise,source", "unknown column 'Prise' (did you mean \"Price\"?)"),
        ("key,Price,Price,source", "column 'Price' appears twice"),
    ],
)
def test_unknown_and_duplicated_columns_are_errors_with_did_you_mean(tmp_path, header, message):
    path = tmp_path / "offers.csv"
    path.write_text(f"# prices\n{header}\na,1,1,x\n")
    with pytest.raises(DataValidationError) as err:
        list(read_rows(path, ("key",), ("key", "Price", "source")))
    assert message in str(err.value) and err.value.line == 2 and "To fix:" in str(err.value)


@pytest.mark.parametrize("cell", ["nan", "NaN", "inf", "-inf", "Infinity", "1e999"])
def test_nan_and_inf_are_never_numbers(tmp_path, cell):
    path = tmp_path / "t.csv"
    path.write_text(f"key,Price\na,{cell}\n")
    (row,) = read_rows(path, ("key",), ("key", "Price"))
    with pytest.raises(DataValidationError, match="not a finite number") as err:
        row.number("Price")
    assert err.value.line == 2 and "leave the cell empty" in str(err.value)


def test_input_reader_refuses_fifos_directories_huge_and_non_utf8_files(tmp_path, monkeypatch):
    import os

    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    with pytest.raises(DataValidationError, match="not a regular file"):
        read_input_text(fifo)  # returns at once: no writer is needed
    with pytest.raises(DataValidationError, match="is a directory"):
        read_input_text(tmp_path)
    big = tmp_path / "big.csv"
    with open(big, "wb") as fh:
        fh.truncate(2 * 1024 * 1024)  # sparse: no disk used
    monkeypatch.setenv("GPUWISE_MAX_INPUT_BYTES", str(1024 * 1024))
    with pytest.raises(DataValidationError, match="larger than the limit of 1,048,576 bytes") as err:
        read_input_text(big)
    assert "GPUWISE_MAX_INPUT_BYTES" in str(err.value)
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"key\nna\xefve\n")
    with pytest.raises(DataValidationError, match="not UTF-8") as err:
        read_input_text(latin)
    assert err.value.line == 2
