"""Drift: versions and settings that are not the same on every node, with the majority value and the odd nodes.

A node that does not know a value (None) is not counted as different: an unknown is a gap in the
capture, not a configuration. Values are compared as text so "550.54.14" and 550.54 never mix.
A key stays English (it names the setting in the JSON and in the history's facts); its label, shown
to the reader, is in the active language.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from gpuwise.facts.models import Facts
from gpuwise.fleet.model import Drift
from gpuwise.i18n import N_, joined, msg

# (group, label, getter): one value per node. Per-GPU and per-device keys are expanded below.
_NODE_KEYS: list[tuple[str, str, Callable[[Facts], Any]]] = [
    ("software", N_("NVIDIA driver"), lambda f: f.software.driver_version),
    ("software", N_("CUDA (driver)"), lambda f: f.software.cuda_driver_version),
    ("software", "torch", lambda f: f.software.torch_version),
    ("software", "torch CUDA", lambda f: f.software.torch_cuda),
    ("software", "cuDNN (torch)", lambda f: f.software.torch_cudnn),
    ("software", "NCCL (torch)", lambda f: f.software.torch_nccl),
    ("software", N_("NCCL (system)"), lambda f: f.software.nccl_system_version),
    ("software", "nvcc", lambda f: f.software.nvcc_version),
    ("software", "Python", lambda f: f.software.python_version),
    ("software", "DCGM", lambda f: f.monitoring.dcgm_version),
    ("software", "OFED", lambda f: f.network.ofed_version),
    ("kernel", N_("kernel release"), lambda f: f.kernel.release),
    ("kernel", N_("distribution"), lambda f: f.kernel.distro),
    ("kernel", "IOMMU", lambda f: f.kernel.iommu),
    ("kernel", N_("transparent hugepages"), lambda f: f.kernel.thp_enabled),
    ("kernel", N_("nvidia_peermem loaded"), lambda f: f.network.nvidia_peermem_loaded),
    ("settings", N_("CPU governor"), lambda f: f.cpu.governor),
    ("settings", N_("NCCL environment"), lambda f: _env_text(f.network.nccl_env)),
    ("settings", "/etc/nccl.conf", lambda f: _env_text(f.network.nccl_conf)),
    ("hardware", N_("GPU count"), lambda f: len(f.gpus)),
    ("hardware", N_("GPU models"), lambda f: joined(", ", sorted({g.name or "?" for g in f.gpus})) or None),
    ("hardware", N_("CPU model"), lambda f: f.cpu.model),
    (
        "hardware",
        N_("memory (GiB)"),
        lambda f: round(f.memory.total_bytes / 2**30) if f.memory.total_bytes else None,
    ),
    ("hardware", N_("InfiniBand/RoCE ports active"), lambda f: _active_ports(f)),
    ("hardware", N_("InfiniBand/RoCE ports"), lambda f: _ports(f)),
]

_GPU_KEYS: list[tuple[str, str, Callable[[Any], Any]]] = [
    ("hardware", N_("PCIe link width"), lambda g: g.pcie.width_current),
    ("hardware", N_("PCIe link generation"), lambda g: g.pcie.gen_current),
    ("firmware", "VBIOS", lambda g: g.vbios_version),
    ("settings", N_("persistence mode"), lambda g: g.persistence_mode),
    ("settings", N_("ECC enabled"), lambda g: g.ecc_enabled),
    ("settings", N_("MIG enabled"), lambda g: g.mig_enabled),
    ("settings", N_("power limit (W)"), lambda g: g.power_limit_watts),
    (
        "hardware",
        N_("GPU memory (GiB)"),
        lambda g: round(g.memory_total_bytes / 2**30) if g.memory_total_bytes else None,
    ),
]


def _env_text(env: dict[str, str] | None) -> str | None:
    if env is None:
        return None
    return joined(" ", (f"{k}={v}" for k, v in sorted(env.items()))) or "(none)"


def _rdma_probed(f: Facts) -> bool:
    """Devices were found, or a tool that lists them ran (so none means none, not unknown)."""
    ran = {f.meta.commands.get(c) for c in ("ibv_devinfo-v", "ibstat")} - {None, "missing", "not captured"}
    return bool(f.network.rdma_devices) or bool(ran)


def _active_ports(f: Facts) -> int | None:
    if not _rdma_probed(f):
        return None
    return sum(1 for d in f.network.rdma_devices for p in d.ports if p.state == "ACTIVE")


def _ports(f: Facts) -> int | None:
    return sum(len(d.ports) for d in f.network.rdma_devices) if _rdma_probed(f) else None


def _text(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def node_values(facts: Facts) -> dict[tuple[str, str], tuple[str, str]]:
    """Every compared (group, key) -> (value as text, label) for one node; unknowns are left out."""
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for group, label, get in _NODE_KEYS:
        _put(out, group, label, "", get, facts)
    for gpu in facts.gpus:
        for group, label, get in _GPU_KEYS:
            _put(out, group, label, f"GPU {gpu.index}", get, gpu)
    for dev in facts.network.rdma_devices:
        _put(out, "firmware", N_("HCA firmware"), dev.name, lambda d: d.fw_version, dev)
        for port in dev.ports:
            if port.state == "ACTIVE":
                _put(
                    out,
                    "hardware",
                    N_("port rate Gb/s"),
                    f"{dev.name}/{port.port}",
                    lambda p: p.rate_gbps,
                    port,
                )
    return out


def _put(out: dict, group: str, label: str, detail: str, get: Callable, obj: Any) -> None:
    """key: the English label and its detail ("PCIe link width (GPU 0)"); the shown label is translated."""
    try:
        value = get(obj)
    except (AttributeError, TypeError, ValueError):
        return
    if value is not None:
        if detail:
            key, shown = (
                f"{label} ({detail})",
                msg("{label} ({detail})").format(label=msg(label), detail=detail),
            )
        else:
            key, shown = label, msg(label)
        out[(group, key)] = (_text(value), shown)


def find_drift(nodes: Iterable[tuple[str, Facts]]) -> list[Drift]:
    """Keys whose known values differ between nodes, odd nodes listed under each minority value."""
    return drift_of((name, node_values(facts)) for name, facts in nodes)


def drift_of(nodes: Iterable[tuple[str, dict[tuple[str, str], tuple[str, str]]]]) -> list[Drift]:
    """find_drift on each node's node_values (what fleet report keeps of a node, summary.py)."""
    by_key: dict[tuple[str, str], dict[str, list[str]]] = {}
    labels: dict[tuple[str, str], str] = {}
    for name, values in nodes:
        for group_key, (value, label) in values.items():
            by_key.setdefault(group_key, {}).setdefault(value, []).append(name)
            labels[group_key] = label
    out = []
    for (group, key), values in by_key.items():
        if len(values) < 2:
            continue
        counts = Counter({v: len(ns) for v, ns in values.items()})
        # ties are broken by the value text, so the report is the same on every run
        majority, count = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        odd = {v: sorted(ns) for v, ns in sorted(values.items()) if v != majority}
        out.append(
            Drift(
                group=group,
                key=key,
                label=labels[(group, key)],
                majority=majority,
                majority_count=count,
                odd=odd,
            )
        )
    order = ("software", "firmware", "kernel", "hardware", "settings")
    return sorted(out, key=lambda d: (order.index(d.group), d.key))
