"""Fixtures for the hostile-input suite (see harness.py)."""

from __future__ import annotations

import pytest

from tests.hostile.harness import Sandbox


@pytest.fixture
def sandbox(tmp_path):
    box = Sandbox(tmp_path)
    yield box
    box.check_untouched()
