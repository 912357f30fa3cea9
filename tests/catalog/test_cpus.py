"""catalog/cpus.py: the CPU FMA rates bench derives CPU peaks from."""

from __future__ import annotations

import pytest

from gpuwise.catalog import cpus
from gpuwise.errors import DataValidationError


def test_shipped_rows_have_a_rate_a_source_and_a_date():
    rates = cpus.load_fma_rates()
    assert rates and all(r.source and r.as_of for r in rates)
    assert all((r.fma_lanes is None) != (r.fp32_multiple is None) for r in rates)
    # every relative (fp32_multiple) row needs an fp32 row to be relative to
    assert any(r.dtype == "fp32" for r in rates)


def test_a_row_with_both_or_neither_rate_is_an_error(tmp_path):
    path = tmp_path / "cpu_fma.csv"
    header = "vendor,flag,dtype,fma_lanes,fp32_multiple,source,as_of\n"
    for row in ("*,fma,fp32,16,2,doc,2026-01-01", "*,fma,fp32,,,doc,2026-01-01"):
        path.write_text(header + row + "\n")
        with pytest.raises(DataValidationError, match="exactly one of") as err:
            cpus.read_fma_rates(path)
        assert err.value.line == 2


def test_unknown_dtype_suggests(tmp_path):
    path = tmp_path / "cpu_fma.csv"
    path.write_text("vendor,flag,dtype,fma_lanes,fp32_multiple,source,as_of\n*,fma,fp23,16,,doc,2026-01-01\n")
    with pytest.raises(DataValidationError, match="did you mean"):
        cpus.read_fma_rates(path)
