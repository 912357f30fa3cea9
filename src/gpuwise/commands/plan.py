"""`gpuwise plan`: registered by its owner (work in progress in this session)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    return None
