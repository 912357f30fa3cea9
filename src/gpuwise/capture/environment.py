"""In-process collectors "env" and "python-env" (registered in sources.INTERNAL_COLLECTORS).

Both return JSON text, stored in a capture as commands/env.txt and commands/python-env.txt.
`collect_python_env` reads torch's build versions from torch/version.py *without importing torch*:
importing torch takes seconds, reading one small file takes microseconds.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import json
import platform
import sys
from pathlib import Path

from gpuwise.capture.redact import redact_env
from gpuwise.i18n import joined

# pip wheels that carry the cuDNN / NCCL libraries torch loads at run time, newest CUDA first.
CUDNN_DISTS = ("nvidia-cudnn-cu13", "nvidia-cudnn-cu12", "nvidia-cudnn-cu11")
NCCL_DISTS = ("nvidia-nccl-cu13", "nvidia-nccl-cu12", "nvidia-nccl-cu11")
TORCH_VERSION_KEYS = ("__version__", "cuda", "git_version", "hip", "rocm", "xpu", "debug")


def collect_env(env: dict[str, str]) -> str:
    """The process environment with credential-looking values redacted: {"redacted": [...], "env": {...}}."""
    clean, redacted = redact_env(dict(env))
    return json.dumps({"redacted": redacted, "env": dict(sorted(clean.items()))}, indent=1)


def collect_python_env(env: dict[str, str]) -> str:
    """Python, torch (version, CUDA, git, HIP), cuDNN and NCCL wheel versions, as JSON. Never imports torch."""
    out: dict[str, object] = {
        "python_version": platform.python_version(),
        "python_executable": sys.executable,
        "python_implementation": platform.python_implementation(),
    }
    torch, torch_reason = read_torch_version()
    out["torch"] = torch
    if torch is None:
        out["torch_reason"] = torch_reason
    for key, dists in (("cudnn", CUDNN_DISTS), ("nccl", NCCL_DISTS)):
        version, dist, reason = _first_dist_version(dists)
        out[key] = {"version": version, "distribution": dist} if version else None
        if version is None:
            out[f"{key}_reason"] = reason
    return json.dumps(out, indent=1)


def read_torch_version() -> tuple[dict[str, object] | None, str]:
    """Find torch without importing it and parse torch/version.py. Returns (fields, '') or (None, reason)."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError) as exc:
        return None, f"torch lookup failed: {exc}"
    if spec is None:
        return None, "torch is not installed in this Python"
    locations = list(spec.submodule_search_locations or [])
    if not locations:
        return None, f"torch at {spec.origin} is not a package"
    path = Path(locations[0]) / "version.py"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return None, f"cannot read {path}: {exc.strerror or exc}"
    fields = parse_torch_version_py(text)
    if fields.get("__version__") is None:
        return None, f"{path} has no __version__"
    fields["path"] = str(path.parent)
    return fields, ""


def parse_torch_version_py(text: str) -> dict[str, object]:
    """Literal assignments of torch/version.py (`__version__ = '2.4.0+cu121'`, `cuda: Optional[str] = '12.1'`).

    Only constant values are taken; anything computed is ignored. Garbage gives {}.
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    fields: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        literal = isinstance(value, ast.Constant) and (
            value.value is None or isinstance(value.value, (str, bool))
        )
        if literal and isinstance(target, ast.Name) and target.id in TORCH_VERSION_KEYS:
            fields[target.id] = value.value  # type: ignore[attr-defined]
    return fields


def _first_dist_version(names: tuple[str, ...]) -> tuple[str | None, str | None, str]:
    for name in names:
        try:
            return importlib.metadata.version(name), name, ""
        except importlib.metadata.PackageNotFoundError:
            continue
        except Exception as exc:  # a broken dist-info must not sink the collector
            return None, None, f"{name}: unreadable metadata ({type(exc).__name__})"
    return (
        None,
        None,
        f"none of {joined(', ', names)} is installed (a CPU build, or libraries bundled in the torch wheel)",
    )
