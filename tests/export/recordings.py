"""Test helpers: sections of the nvidia_gpu_exporter multi-command captures in the shared real fixtures."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import REAL


def capture_section(path: Path, title: str) -> str:
    """The body of the section whose banner line is '# <title>' (e.g. 'load :: dmon (per-device ...')."""
    text = path.read_text(encoding="utf-8")
    parts = re.split(r"^#{80}\n", text, flags=re.M)
    for i, part in enumerate(parts):
        if part.startswith(f"# {title}") and i + 1 < len(parts):
            return parts[i + 1].strip("\n") + "\n"
    raise KeyError(f"no section {title!r} in {path.name}")


def exporter_captures() -> list[Path]:
    d = REAL / "nvidia_smi_captures"
    return sorted(d.glob("nvidia_gpu_exporter_linux-*.txt")) if d.is_dir() else []
