"""gpuwise.thresholds: every shipped value + source file loads through the one loader, and a bad row
names its file and key."""

from __future__ import annotations

import pytest

from gpuwise.errors import DataValidationError
from gpuwise.thresholds import Threshold, load_thresholds, parse_thresholds

SHIPPED = [
    ("gpuwise.advise", "data/thresholds.yaml", None, False),
    ("gpuwise.fleet", "data/thresholds.yaml", None, True),
    ("gpuwise.store", "data/regress.yaml", None, True),
    ("gpuwise.export", "data/http_limits.yaml", None, True),
    ("gpuwise.export", "data/signals.yaml", "thresholds", True),
    ("gpuwise.stability", "data/stability.yaml", None, False),
]


@pytest.mark.parametrize(("package", "resource", "section", "numbers"), SHIPPED)
def test_every_shipped_file_loads_with_a_source_on_each_row(package, resource, section, numbers):
    rows = load_thresholds(package, resource, section, numbers)
    assert rows and all(isinstance(t, Threshold) and t.source.strip() for t in rows.values())


def test_the_users_of_the_files_read_the_same_rows():
    from gpuwise.advise.engine import thresholds as advise
    from gpuwise.export.http_server import default_limits
    from gpuwise.export.signals import load_config
    from gpuwise.fleet.thresholds import value
    from gpuwise.stability.verdict import setting
    from gpuwise.store.regress import thresholds as regress

    assert advise()["shm_min_bytes"].value == 1073741824 and advise()["shm_min_bytes"].unit == "bytes"
    assert value("robust_z_threshold") == 3.5
    assert regress()["mad_to_sigma"] == 1.4826
    assert default_limits().max_connections == 1024 and isinstance(default_limits().workers, int)
    assert load_config().thresholds["idle_util_pct"] == 5.0
    assert setting("stable_cv_max") == 0.05


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ({"x": {"value": 1}}, "x: no source"),
        ({"x": {"value": 1, "source": "  "}}, "x: no source"),
        ({"x": {"source": "https://example.org"}}, "x: no value"),
        ({"x": 3}, "x: no value"),
        ({"x": {"value": "ten", "source": "s"}}, "x: value 'ten' is not a number"),
        ({"x": {"value": True, "source": "s"}}, "x: value True is not a number"),
        ({"x": {"value": float("nan"), "source": "s"}}, "x: value nan is not a number"),
        ({"x": {"value": 1, "source": "s", "sauce": "t"}}, "x: unknown field 'sauce'"),
        (["value", "source"], "expected rows of the form `name: value, source`"),
    ],
)
def test_a_bad_row_names_the_file_and_the_key(rows, message):
    with pytest.raises(DataValidationError) as e:
        parse_thresholds(rows, "gpuwise/fleet/data/thresholds.yaml")
    assert str(e.value).startswith(f"gpuwise/fleet/data/thresholds.yaml: {message}")
    assert "To fix:" in str(e.value)


def test_a_table_or_list_is_a_value_only_where_the_file_allows_it():
    rows = {"reasons": {"value": ["a", "b"], "source": "s", "unit": "names", "notes": "n"}}
    assert parse_thresholds(rows, "f.yaml", numbers=False)["reasons"] == Threshold(
        "reasons", ["a", "b"], "s", "names", "n"
    )
    with pytest.raises(DataValidationError, match="reasons: value"):
        parse_thresholds(rows, "f.yaml")
