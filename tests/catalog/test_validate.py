"""catalog/validate.py: the CSV reader every data file goes through (catalog and facts/data)."""

from __future__ import annotations

import pytest

from gpuwise.catalog.validate import read_rows
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
    ("name", "required"),
    [
        ("monitoring_agents.csv", ("agent", "processes")),
        ("network_fstypes.csv", ("fstype", "kind")),
    ],
)
def test_facts_data_files_cite_a_source_on_every_row(name, required):
    rows = sourcing.load_data_csv(name, required)  # raises on a row without a source
    assert rows and all(r["source"] and all(r[c] for c in required) for r in rows)
