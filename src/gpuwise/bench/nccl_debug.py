"""What an `NCCL_DEBUG=INFO` log says about a run: NCCL version, the network NCCL chose (IB, Socket or a
plugin, and for aws-ofi-nccl the libfabric provider it selected), the transports between ranks, NVLS, the
algorithms picked, variables set by the environment, and every `NCCL WARN` line.

Lines look like `host:1234:1240 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>`
(NCCL's debug.cc prefix, then the message); mpirun/srun prefixes before it are ignored.
"""

from __future__ import annotations

import re
from collections import Counter

from pydantic import ConfigDict, Field

from gpuwise.textmodel import TextModel

MAX_WARNINGS = 20
# NCCL's algorithm ids in TUNING lines ("Algo 1 proto 2"), src/include/devcomm.h (NCCL_ALGO_*)
ALGORITHMS = {0: "Tree", 1: "Ring", 2: "CollNetDirect", 3: "CollNetChain", 4: "NVLS", 5: "NVLSTree", 6: "PAT"}
_MSG = re.compile(r"NCCL (INFO|WARN) (.*)$")
# aws-ofi-nccl's own logger in its test programs (nccl_message_transfer, ring, ...), without NCCL's prefix:
# "WARN: Function: find_ofi_provider Line: 543: NET/OFI Couldn't find any optimal provider"
_OFI_MSG = re.compile(r"\b(INFO|WARN): Function: \w+ Line: \d+: (NET/OFI .*)$", re.M)
_VERSION = re.compile(r"NCCL version (\S+)")
_USING_NETWORK = re.compile(r"Using network (.+?)\s*$")
_NET_DEVICES = re.compile(r"NET/(IB|Socket)\s*:\s*Using (.+?)(?:\s*;\s*OOB.*)?$")
# a transport's name can hold spaces: "via NET/AWS Libfabric/0/GDRDMA",
# "via NET/NCCL RDMA Plugin v6/0/GDRDMA/Shared"
_VIA = re.compile(r"->.*? via (.+?)\s*$")
_ENV = re.compile(r"^(NCCL_[A-Z0-9_]+) set by environment to (.*?)\.?\s*$")
# "comm 0x.. rank 0 nRanks 16 nNodes 2 ..." (NCCL >= 2.12) or "... rank 15 nranks 16 cudaDev 7 ... Init COMPLETE"
_COMM = re.compile(r"\bn[Rr]anks (\d+)(?: nNodes (\d+))?")
# aws-ofi-nccl's plugin: "NET/OFI Selected Provider is efa (found 16 nics)", "... is tcp;ofi_rxm"
_OFI_PROVIDER = re.compile(r"NET/OFI Selected Provider is ([^\s,(]+)(?:.*?found (\d+) nics)?")
# topology dump (NCCL_DEBUG_SUBSYS=GRAPH): "+ NET[25.0] - NET/1 (7a852d0003f6ceb8/1/25.000000)", bw in GB/s
_TOPO_NET = re.compile(r"- NET/(\d+) \([0-9a-fA-Fx]+/\d+/([\d.]+)\)")
_TUNING = re.compile(r"^(\w+): \d+ Bytes -> Algo (\d+) proto (\d+)")


class NcclDebugLog(TextModel):
    """One NCCL_DEBUG=INFO log, summarised. Lists keep first-seen order."""

    model_config = ConfigDict(extra="forbid")
    source: str
    version: str | None = None
    networks: list[str] = Field(default_factory=list)  # "IB", "Socket", or a plugin's name
    net_devices: dict[str, str] = Field(default_factory=dict)  # "IB" -> "[0]mlx5_0:1/IB [1]mlx5_1:1/IB"
    ib_device_missing: bool = False  # "NET/IB : No device found."
    ofi_provider: str | None = None  # the libfabric provider aws-ofi-nccl selected: "efa", "tcp;ofi_rxm"
    ofi_nics: int | None = None  # the NICs it found for that provider
    net_connection_processes: int = 0  # processes (host:pid) whose lines show a connection via NET/
    net_bw_gb_s: dict[str, float] = Field(default_factory=dict)  # NET/<index> -> GB/s, from the topology dump
    transports: dict[str, int] = Field(
        default_factory=dict
    )  # "P2P/IPC" -> connections, "NET/Socket/0" -> ...
    ranks: int | None = None
    nodes: int | None = None
    nvls: bool | None = None  # NVLS (NVLink SHARP) available / used
    algorithms: dict[str, list[str]] = Field(default_factory=dict)  # "AllReduce" -> ["Ring", "NVLS"]
    env: dict[str, str] = Field(default_factory=dict)  # NCCL_* variables NCCL reports as set
    warnings: list[str] = Field(default_factory=list)  # NCCL WARN messages (first MAX_WARNINGS)
    lines: int = 0  # NCCL INFO/WARN lines read


def looks_like_nccl_debug(text: str) -> bool:
    return "NCCL INFO" in text or "NCCL WARN" in text or bool(_OFI_MSG.search(text))


def parse_nccl_debug(text: str, source: str) -> NcclDebugLog:
    log = NcclDebugLog(source=source)
    transports: Counter[str] = Counter()
    net_ranks: set[str] = set()
    for line in text.splitlines():
        m = _MSG.search(line) or _OFI_MSG.search(line)
        if not m:
            if (v := _VERSION.search(line)) and log.version is None:  # printed without the INFO prefix too
                log.version = v.group(1)
            continue
        log.lines += 1
        kind, msg = m.group(1), m.group(2).strip()
        if kind == "WARN":
            if len(log.warnings) < MAX_WARNINGS:
                log.warnings.append(msg[:300])
            continue
        _read_info(log, msg, transports)
        if " via NET/" in msg:
            net_ranks.add(line[: m.start()].strip()[-40:])  # "host:pid:tid [dev]": one process per GPU
    log.transports = dict(transports)
    log.net_connection_processes = len({p.rsplit(":", 1)[0] for p in net_ranks})
    return log


def _read_info(log: NcclDebugLog, msg: str, transports: Counter[str]) -> None:
    if (v := _VERSION.search(msg)) and log.version is None:
        log.version = v.group(1)
    elif o := _OFI_PROVIDER.search(msg):
        log.ofi_provider = log.ofi_provider or o.group(1)
        log.ofi_nics = log.ofi_nics or (int(o.group(2)) if o.group(2) else None)
    elif u := _USING_NETWORK.search(msg):
        _add(log.networks, u.group(1))
    elif d := _NET_DEVICES.search(msg):
        log.net_devices.setdefault(d.group(1), d.group(2).strip())
    elif n := _TOPO_NET.search(msg):
        log.net_bw_gb_s.setdefault(n.group(1), float(n.group(2)))
    elif msg.startswith("NET/IB") and "No device found" in msg:
        log.ib_device_missing = True
    elif v := _VIA.search(msg):
        transports[v.group(1)] += 1
    elif e := _ENV.match(msg):
        log.env[e.group(1)] = e.group(2)
    elif c := _COMM.search(msg):
        log.ranks = int(c.group(1))
        log.nodes = int(c.group(2)) if c.group(2) else log.nodes
    elif t := _TUNING.match(msg):
        _add(log.algorithms.setdefault(t.group(1), []), ALGORITHMS.get(int(t.group(2)), f"algo {t.group(2)}"))
    if "NVLS" in msg:
        if "support is available" in msg or msg.startswith("NVLS comm"):
            log.nvls = True
        elif log.nvls is None and ("not available" in msg or "disabled" in msg.lower()):
            log.nvls = False


def _add(items: list[str], value: str) -> None:
    if value not in items:
        items.append(value)


_NIC = re.compile(r"\[(\d+)\]([\w.-]+?)(?::(\d+))?/(IB|RoCE)\b")
_VIA_NET = re.compile(r"^NET/IB\w*/(\d+)(?:/|$)")


def net_nics(log: NcclDebugLog) -> dict[str, str]:
    """The RDMA NICs NCCL used, index -> "mlx5_0:1/IB": those its connections went through ("via
    NET/IB/1/GDRDMA") when a node's worth of processes logged theirs, else all it listed
    ("NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE"); empty when the log has no NET/IB line."""
    listed = {
        m.group(1): f"{m.group(2)}:{m.group(3) or 1}/{m.group(4)}"
        for m in _NIC.finditer(log.net_devices.get("IB", ""))
    }
    used = {m.group(1) for t in log.transports if (m := _VIA_NET.match(t))}
    # one process's lines show only its own NIC: trust "used" only when a whole node's ranks logged theirs
    whole_node = log.net_connection_processes >= (gpus_per_node(log) or 1 << 30)
    return {i: n for i, n in listed.items() if i in used} if whole_node and used & set(listed) else listed


def uses_gdrdma(log: NcclDebugLog) -> bool:
    """Did a network connection use GPUDirect RDMA ("via NET/IB/0/GDRDMA")?"""
    return any(t.startswith("NET/") and "/GDRDMA" in t for t in log.transports)


def gpus_per_node(log: NcclDebugLog) -> int | None:
    """Ranks per node from the communicator line (nRanks, nNodes), when it divides evenly."""
    if log.ranks and log.nodes and log.ranks % log.nodes == 0:
        return log.ranks // log.nodes
    return None


# libfabric providers that move data over the kernel's TCP/UDP stack, not an RDMA device
OFI_SOCKET_PROVIDERS = ("tcp", "sockets", "udp")


def ofi_over_sockets(log: NcclDebugLog) -> bool:
    """Did aws-ofi-nccl select a libfabric provider that runs over TCP/UDP (not EFA or verbs)?"""
    first = (log.ofi_provider or "").split(";")[0].lower()
    return first in OFI_SOCKET_PROVIDERS


def uses_socket(log: NcclDebugLog) -> bool:
    """Did inter-node traffic go over NCCL's TCP socket transport?"""
    return "Socket" in log.networks or any(t.startswith("NET/Socket") for t in log.transports)
