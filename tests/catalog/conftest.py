"""Catalog tests never read the developer's real ~/.config/gpuwise: each test gets an empty one."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def isolated_config(tmp_path_factory, monkeypatch):
    """Point $XDG_CONFIG_HOME at an empty folder; returns the offers folder inside it (not created)."""
    config = tmp_path_factory.mktemp("xdg-config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    return config / "gpuwise" / "offers"
