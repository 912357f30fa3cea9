"""Helpers for the launch tests: run the real CLI, write job files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
CAPTURES = REPO / "tests" / "captures"


def gpuwise(*args: str, env: dict | None = None, cwd: Path = REPO) -> SimpleNamespace:
    """The real entry point (errors -> exit 3 with 'To fix'), as a user runs it."""
    e = dict(os.environ, COLUMNS="100", **(env or {}))
    for name in ("TENCENTCLOUD_SECRET_ID", "TENCENTCLOUD_SECRET_KEY"):
        e.pop(name, None)  # never send a request from a test
    e["HOME"] = str(cwd)  # no ~/.tencentcloud profile either
    p = subprocess.run([sys.executable, "-m", "gpuwise.cli", *args], capture_output=True, text=True, env=e, cwd=cwd,
                       timeout=120)  # fmt: skip
    return SimpleNamespace(
        exit_code=p.returncode, output=p.stdout + p.stderr, stdout=p.stdout, stderr=p.stderr
    )


def write_job(path: Path, **fields) -> Path:
    import yaml

    base = {"name": "t-job", "command": "torchrun train.py --epochs 1", "nodes": 2, "gpus_per_node": 8}
    base.update(fields)
    path.write_text(yaml.safe_dump(base, sort_keys=False))
    return path
