"""Every shipped data file is listed in pyproject's package-data, so a wheel install can read it."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the check is the same on every version
ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "gpuwise"


def _unlisted() -> list[str]:
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "gpuwise"
    ]
    shipped = [p.relative_to(PACKAGE).as_posix() for p in PACKAGE.glob("**/data/**/*") if p.is_file()]
    return [f for f in shipped if not any(fnmatch.fnmatch(f, pat) for pat in patterns)]


def test_every_data_file_is_in_package_data():
    assert _unlisted() == []
