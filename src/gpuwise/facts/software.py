"""Toolchain facts: Python and torch builds (from the python-env collector), nvcc, the system NCCL
library, container runtimes, the NVIDIA container toolkit and NVIDIA systemd services.

driver_version and cuda_driver_version are filled in by collect.py from the GPU collector.
"""

from __future__ import annotations

import re

from gpuwise.capture.host import Host
from gpuwise.capture.sources import COMMANDS
from gpuwise.facts.models import Software, Unknown
from gpuwise.facts.sourcing import command_json, command_text
from gpuwise.i18n import msg

SERVICE_UNITS: tuple[str, ...] = tuple(COMMANDS["systemctl-is-active"].argv[2:])
_SYSTEMCTL_STATES = {
    "active",
    "inactive",
    "failed",
    "activating",
    "deactivating",
    "reloading",
    "unknown",
    "maintenance",
}


def parse_nvcc(text: str) -> str | None:
    """'Cuda compilation tools, release 13.0, V13.0.88' -> '13.0.88' (or '13.0' without the V part)."""
    m = re.search(r"release\s+(\d+\.\d+)(?:,\s*V(\d+(?:\.\d+)+))?", text)
    return (m.group(2) or m.group(1)) if m else None


def parse_ldconfig_nccl(text: str) -> tuple[str | None, str | None]:
    """ldconfig -p -> (version in the file name or None, path). ('2.21.5', path) for libnccl.so.2.21.5."""
    best: tuple[str | None, str | None] = (None, None)
    for line in text.splitlines():
        m = re.match(r"^\s*libnccl\.so(?:\.(\d+(?:\.\d+)*))?\s.*=>\s*(\S+)", line)
        if not m:
            continue
        version, path = m.group(1), m.group(2)
        if version and version.count(".") >= 2:
            return version, path
        if best[1] is None or (version and not best[0]):
            best = (None, path)
    return best


def parse_runtime_version(text: str) -> str | None:
    """'Docker version 28.2.2, build e6534b4' -> 'docker 28.2.2'; 'podman version 4.3.1' -> 'podman 4.3.1'."""
    m = re.search(r"^(\w+)\s+version\s+v?([\w.+~-]+?),?(?:\s|$)", text.strip(), re.IGNORECASE)
    return f"{m.group(1).lower()} {m.group(2)}" if m else None


def parse_container_cli(text: str) -> str | None:
    """`nvidia-container-cli --version`: 'cli-version: 1.17.8' (older: 'version: 1.0.0')."""
    m = re.search(r"^\s*(?:cli-)?version:\s*(\S+)", text, re.MULTILINE)
    return m.group(1) if m else None


def parse_services(text: str, units: tuple[str, ...] = SERVICE_UNITS) -> dict[str, str] | None:
    """`systemctl is-active u1 u2 ...` prints one state per unit, in order; None if that is not what we got."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if len(lines) != len(units) or not all(ln in _SYSTEMCTL_STATES for ln in lines):
        return None
    return dict(zip(units, lines, strict=True))


def collect_software(host: Host) -> Software:
    """Python/torch/cuDNN/NCCL, nvcc, system NCCL, container runtimes, container toolkit, services."""
    sw = Software()
    _python_env(sw, host)

    text, reason = command_text(host, "nvcc-version")
    sw.nvcc_version = parse_nvcc(text) if text else None
    if sw.nvcc_version is None:
        sw.why("nvcc_version", reason or msg("no 'release X.Y' in nvcc --version"), kind="unparsable")

    text, reason = command_text(host, "ldconfig-p")
    version, path = parse_ldconfig_nccl(text) if text else (None, None)
    sw.nccl_system_version = version
    if version is None:
        if path:
            sw.why(
                "nccl_system_version",
                msg("libnccl.so at {path}; ldconfig names no full version").format(path=path),
                kind="unparsable",
            )
        else:
            sw.why(
                "nccl_system_version",
                reason or msg("no libnccl.so in the ldconfig cache"),
                kind="not_applicable",
            )

    for command_id in ("docker-version", "podman-version"):
        text, reason = command_text(host, command_id)
        runtime = parse_runtime_version(text) if text else None
        if runtime:
            sw.container_runtimes.append(runtime)
        else:
            sw.why(
                f"container_runtimes.{command_id.split('-')[0]}",
                reason or msg("unrecognised version output"),
                kind="unparsable",
            )

    text, reason = command_text(host, "nvidia-container-cli-version")
    sw.nvidia_container_toolkit = parse_container_cli(text) if text else None
    if sw.nvidia_container_toolkit is None:
        sw.why(
            "nvidia_container_toolkit",
            reason or msg("no version in nvidia-container-cli --version"),
            kind="unparsable",
        )

    # is-active exits 3 when any unit is inactive; the per-unit lines are still the answer.
    text, reason = command_text(host, "systemctl-is-active", allow_rc=(1, 2, 3, 4))
    services = parse_services(text) if text else None
    if services is None:
        result = host.run("systemctl-is-active")
        stderr = (result.stderr.strip().splitlines() or [""])[0][:160] if result else ""
        sw.why(
            "services",
            reason or msg("systemctl gave no per-unit states") + (f": {stderr}" if stderr else ""),
            kind="unparsable",
        )
    else:
        sw.services = services
    return sw


def _python_env(sw: Software, host: Host) -> None:
    data, reason = command_json(host, "python-env")
    if not isinstance(data, dict):
        for field in (
            "python_version",
            "torch_version",
            "torch_build",
            "torch_cuda",
            "torch_cudnn",
            "torch_nccl",
        ):
            sw.why(field, reason or msg("python-env output is not a JSON object"), kind="unparsable")
        return
    sw.python_version = _str(data.get("python_version"))
    if sw.python_version is None:
        sw.why("python_version", msg("python-env has no python_version"), kind="unparsable")
    torch = data.get("torch")
    if isinstance(torch, dict) and _str(torch.get("__version__")):
        sw.torch_version = _str(torch.get("__version__"))
        sw.torch_cuda = _str(torch.get("cuda"))
        hip = _str(torch.get("hip"))
        sw.torch_build = "cuda" if sw.torch_cuda else "rocm" if hip else "cpu"
        if sw.torch_cuda is None:
            text = (
                msg("torch is a ROCm build (HIP {hip})").format(hip=hip)
                if hip
                else msg("torch is a CPU-only build")
            )
            sw.why("torch_cuda", text, kind="not_applicable")
    else:
        # torch absent from this Python, or not readable as a package: either way not usable here.
        why = Unknown(kind="tool_missing", text=_str(data.get("torch_reason")) or msg("torch not found"))
        for field in ("torch_version", "torch_build", "torch_cuda"):
            sw.why(field, why)
    for field, key in (("torch_cudnn", "cudnn"), ("torch_nccl", "nccl")):
        entry = data.get(key)
        value = _str(entry.get("version")) if isinstance(entry, dict) else None
        setattr(sw, field, value)
        if value is None:
            sw.why(
                field,
                _str(data.get(f"{key}_reason")) or msg("no {key} version in python-env").format(key=key),
                kind="not_applicable",
            )


def _str(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None
