"""Small helpers shared by rule modules: GPU labels, version parsing, NCCL settings, shared links.

Controllability presets live in gpuwise.advise.controls."""

from __future__ import annotations

import re

from gpuwise.advise.finding import ExpectedGain
from gpuwise.advise.rules._links import AREAL_639
from gpuwise.facts.models import Facts, Gpu
from gpuwise.i18n import N_

# what RDMA instead of TCP sockets buys NCCL (network.py and nccl_logs.py cite it)
RDMA_GAIN = ExpectedGain(
    text=N_("~4-5x faster collectives than TCP sockets (370 -> 50 ms for a 1 GB AllReduce)"),
    source=f"AReaL issue #639, {AREAL_639}",
)


def sentences(parts: list[str]) -> str:
    """Join translated sentences: with a space in English, with nothing after Chinese full stops."""
    out = ""
    for part in parts:
        out += part if not out or out.endswith(("。", "；", "：")) else " " + part
    return out


def label(g: Gpu, pos: int) -> str:
    """A fact path for one GPU: gpus[<position>] (the index nvidia-smi printed, when known, in the value)."""
    return f"gpus[{pos}]"


def gpus(facts: Facts) -> list[tuple[str, Gpu]]:
    return [(label(g, i), g) for i, g in enumerate(facts.gpus)]


def version_tuple(text: str | None) -> tuple[int, ...] | None:
    """'12.4' -> (12, 4); '2.5.1+cu124' -> (2, 5, 1); None or garbage -> None."""
    if not text:
        return None
    m = re.match(r"\s*v?(\d+(?:\.\d+)*)", str(text))
    return tuple(int(x) for x in m.group(1).split(".")) if m else None


def cc_value(g: Gpu) -> float | None:
    try:
        return float(g.compute_capability) if g.compute_capability else None
    except ValueError:
        return None


def is_virtual_machine(facts: Facts) -> bool:
    v = (facts.platform.virtualization or "").lower()
    return bool(v) and v != "none"


def total_gpu_memory_bytes(facts: Facts) -> int | None:
    """Sum of every GPU's memory; None when there are no GPUs or any GPU's memory is unknown
    (a partial sum would understate it and let a ratio check pass that should not)."""
    sizes = [g.memory_total_bytes for g in facts.gpus]
    return sum(sizes) if sizes and None not in sizes else None


def in_container(facts: Facts) -> bool:
    c = facts.platform.container
    return bool(c) and c != "none"


def physical_nics(facts: Facts):
    return [n for n in facts.network.nics if not n.virtual and n.name != "lo"]


def captured(facts: Facts, command_id: str) -> bool:
    """Was the command's output recorded (even as 'tool missing')? Absence claims need this."""
    state = facts.meta.commands.get(command_id)
    return state is not None and state != "not captured"


def nccl_setting(facts: Facts, name: str) -> tuple[str | None, str | None]:
    """(value, where) for an NCCL variable: the environment wins over /etc/nccl.conf (as NCCL reads them)."""
    if name in facts.network.nccl_env:
        return facts.network.nccl_env[name], "network.nccl_env"
    conf = facts.network.nccl_conf or {}
    if name in conf:
        return conf[name], "network.nccl_conf"
    return None, None
