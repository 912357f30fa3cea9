"""CPU and NUMA facts from `lscpu` (or /proc/cpuinfo), `numactl -H` and /sys/devices/system.

Counts follow the facts contract: `cores` are physical cores over all sockets, `threads` are
logical CPUs online. lscpu's classic, tree (indented) and `-e` table layouts are all understood.
"""

from __future__ import annotations

import re
from collections import Counter

from gpuwise.capture.host import Host
from gpuwise.facts.models import Cpu, NumaNode, Unknown, combined
from gpuwise.facts.sourcing import (
    binary_scale,
    command_text,
    file_text,
    format_cpulist,
    parse_cpulist,
    to_float,
    to_int,
)
from gpuwise.i18n import joined, msg

_KEY_LINE = re.compile(r"^(\s*)([^:]+?):(\s*)(.*)$")


def parse_lscpu(text: str) -> dict[str, str]:
    """`lscpu` output -> {key: value}. Keys are as printed ("Model name", "Socket(s)").

    The tree layout wraps the Flags value over several fixed-width lines, cutting words anywhere;
    a continuation line is glued on at the value column, with a space where the previous
    line was shorter than the wrap width (the space it ended in was trimmed).
    """
    out: dict[str, str] = {}
    key: str | None = None
    column = 0
    pieces: list[tuple[str, int]] = []  # (text, raw line length) of the value being continued

    def flush() -> None:
        if key is None or not pieces:
            return
        width = max(length for _label, length in pieces[:-1]) if len(pieces) > 1 else 0
        value = ""
        for i, (piece, length) in enumerate(pieces):
            value += piece
            if i < len(pieces) - 1 and length < width:
                value += " "
        out[key] = value.strip()

    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        m = _KEY_LINE.match(line)
        if m and not line.lstrip().startswith("#"):
            flush()
            key = m.group(2).strip()
            column = len(m.group(1)) + len(m.group(2)) + 1 + len(m.group(3))
            pieces = [(m.group(4), len(line))]
            continue
        if key is not None and pieces and raw[:1].isspace() and ":" not in line:
            indent = len(line) - len(line.lstrip())
            pieces.append((line[min(indent, column) :], len(line)))
    flush()
    return out


def parse_lscpu_table(text: str) -> list[dict[str, str]]:
    """`lscpu -e` table -> one dict per CPU row, keyed by the upper-case header ("SOCKET", "CORE")."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return []
    header = lines[0].split()
    if not header or header[0] != "CPU" or "CORE" not in header:
        return []
    rows = []
    for line in lines[1:]:
        cells = line.split()
        if len(cells) == len(header) and cells[0].isdigit():
            rows.append(dict(zip(header, cells, strict=True)))
    return rows


def parse_cpuinfo(text: str) -> list[dict[str, str]]:
    """/proc/cpuinfo -> one dict per processor block."""
    blocks: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if current:
                blocks.append(current)
            current = {}
            continue
        key, sep, value = line.partition(":")
        if sep:
            current[key.strip()] = value.strip()
    if current:
        blocks.append(current)
    return [b for b in blocks if "processor" in b]


def parse_numactl(text: str) -> list[NumaNode]:
    """`numactl -H` -> nodes with their CPUs (as a cpulist) and memory size/free."""
    nodes: dict[int, NumaNode] = {}
    for line in text.splitlines():
        m = re.match(r"^node\s+(\d+)\s+(cpus|size|free):\s*(.*)$", line.strip())
        if not m:
            continue
        node = nodes.setdefault(int(m.group(1)), NumaNode(id=int(m.group(1))))
        what, rest = m.group(2), m.group(3).strip()
        if what == "cpus":
            cpus = [int(c) for c in rest.split() if c.isdigit()]
            node.cpus = format_cpulist(cpus)
        else:
            size = re.match(r"^(\d+)\s*([KMGT]?B)$", rest)
            if size:
                value = int(size.group(1)) * binary_scale(size.group(2))
                if what == "size":
                    node.memory_total_bytes = value
                else:
                    node.memory_free_bytes = value
    return [nodes[k] for k in sorted(nodes)]


def _node_meminfo(text: str, field: str) -> int | None:
    m = re.search(rf"^Node\s+\d+\s+{field}:\s+(\d+)\s*kB", text, re.MULTILINE)
    return int(m.group(1)) * 1024 if m else None


def collect_cpu(host: Host) -> Cpu:
    """CPU model, topology, frequency, flags, governor and NUMA nodes."""
    cpu = Cpu()
    lscpu_text, lscpu_reason = command_text(host, "lscpu")
    info = parse_lscpu(lscpu_text) if lscpu_text else {}
    table = parse_lscpu_table(lscpu_text) if lscpu_text and not info.get("CPU(s)") else []
    cpuinfo_text, cpuinfo_reason = file_text(host, "/proc/cpuinfo")
    procs = parse_cpuinfo(cpuinfo_text) if cpuinfo_text else []

    if info.get("CPU(s)"):
        _from_lscpu(cpu, info)
    elif table:
        _from_lscpu_table(cpu, table)
    if procs:
        _fill_from_cpuinfo(cpu, procs)
    if cpu.max_mhz is None:
        khz = to_int(host.read_file("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"))
        if khz:
            cpu.max_mhz = khz / 1000.0

    _numa(cpu, host, info)
    cpu.governor, governor_reason = _governor(host)

    failures = [r for r in (lscpu_reason, cpuinfo_reason) if r]
    why_missing = (
        combined(failures, joined("; ", (r.text for r in failures)))
        if failures
        else Unknown(kind="unparsable", text=msg("not reported by lscpu or /proc/cpuinfo"))
    )
    for field in ("model", "vendor", "architecture", "sockets", "cores", "threads", "flags"):
        if getattr(cpu, field) is None:
            cpu.why(field, why_missing)
    if cpu.max_mhz is None:
        cpu.why(
            "max_mhz",
            msg("no 'CPU max MHz' in lscpu and no cpufreq cpuinfo_max_freq (usual inside VMs)"),
            kind="unparsable",
        )
    if cpu.numa_nodes is None:
        cpu.why("numa_nodes", msg("no NUMA information from numactl, sysfs or lscpu"), kind="unparsable")
    if cpu.governor is None:
        cpu.why("governor", governor_reason)
    return cpu


def _from_lscpu(cpu: Cpu, info: dict[str, str]) -> None:
    cpu.model = info.get("Model name") or None
    cpu.vendor = info.get("Vendor ID") or None
    cpu.architecture = info.get("Architecture") or None
    online = parse_cpulist(info.get("On-line CPU(s) list", ""))
    cpu.threads = len(online) if online else to_int(info.get("CPU(s)"))
    sockets = to_int(info.get("Socket(s)"))
    per_socket = to_int(info.get("Core(s) per socket"))
    clusters, per_cluster = to_int(info.get("Cluster(s)")), to_int(info.get("Core(s) per cluster"))
    cpu.sockets = sockets
    if sockets and per_socket:
        cpu.cores = sockets * per_socket
    elif clusters and per_cluster:  # arm64 lscpu prints clusters when sockets are unknown ("Socket(s): -")
        cpu.cores = clusters * per_cluster
    elif cpu.threads and to_int(info.get("Thread(s) per core")):
        cpu.cores = cpu.threads // to_int(info.get("Thread(s) per core"))  # type: ignore[operator]
    cpu.max_mhz = to_float(info.get("CPU max MHz"))
    flags = info.get("Flags")
    cpu.flags = flags.split() if flags else None
    cpu.numa_nodes = to_int(info.get("NUMA node(s)"))


def _from_lscpu_table(cpu: Cpu, rows: list[dict[str, str]]) -> None:
    online = [r for r in rows if r.get("ONLINE", "yes") == "yes"]
    cpu.threads = len(online)
    if "SOCKET" in rows[0]:
        cpu.sockets = len({r["SOCKET"] for r in rows})
        cpu.cores = len({(r["SOCKET"], r["CORE"]) for r in online})
    else:
        cpu.cores = len({r["CORE"] for r in online})
    if "NODE" in rows[0]:
        cpu.numa_nodes = len({r["NODE"] for r in rows})
    speeds = [to_float(r.get("MAXMHZ")) for r in rows]
    cpu.max_mhz = max((s for s in speeds if s), default=None)
    cpu.why("model", msg("`lscpu -e` table has no model name"), kind="unparsable")


def _fill_from_cpuinfo(cpu: Cpu, procs: list[dict[str, str]]) -> None:
    """/proc/cpuinfo fills what lscpu did not give (or everything when lscpu is missing)."""
    first = procs[0]
    cpu.model = cpu.model or first.get("model name") or None
    cpu.vendor = cpu.vendor or first.get("vendor_id") or None
    if cpu.flags is None:
        flags = first.get("flags") or first.get("Features")
        cpu.flags = flags.split() if flags else None
    if cpu.threads is None:
        cpu.threads = len(procs)
    if cpu.sockets is None and all("physical id" in p for p in procs):
        cpu.sockets = len({p["physical id"] for p in procs})
    if cpu.cores is None and all("physical id" in p and "core id" in p for p in procs):
        cpu.cores = len({(p["physical id"], p["core id"]) for p in procs})


def _numa(cpu: Cpu, host: Host, info: dict[str, str]) -> None:
    """NUMA nodes merged from lscpu (CPUs), sysfs (CPUs, memory) and numactl -H (CPUs, memory)."""
    nodes: dict[int, NumaNode] = {}
    for key, value in info.items():
        m = re.match(r"^NUMA node(\d+) CPU\(s\)$", key)
        if m:
            nodes.setdefault(int(m.group(1)), NumaNode(id=int(m.group(1)))).cpus = value or None
    for path in host.glob("/sys/devices/system/node/node*/cpulist"):
        m = re.search(r"/node(\d+)/cpulist$", path)
        text = host.read_file(path)
        if m and text is not None:
            nodes.setdefault(int(m.group(1)), NumaNode(id=int(m.group(1)))).cpus = text.strip() or None
    for path in host.glob("/sys/devices/system/node/node*/meminfo"):
        m = re.search(r"/node(\d+)/meminfo$", path)
        text = host.read_file(path)
        if m and text:
            node = nodes.setdefault(int(m.group(1)), NumaNode(id=int(m.group(1))))
            node.memory_total_bytes = _node_meminfo(text, "MemTotal")
            node.memory_free_bytes = _node_meminfo(text, "MemFree")
    numactl_text, numactl_reason = command_text(host, "numactl-H")
    for parsed in parse_numactl(numactl_text) if numactl_text else []:
        node = nodes.setdefault(parsed.id, NumaNode(id=parsed.id))
        for field in ("cpus", "memory_total_bytes", "memory_free_bytes"):
            if getattr(node, field) is None:
                setattr(node, field, getattr(parsed, field))
    cpu.numa = [nodes[k] for k in sorted(nodes)]
    if cpu.numa:
        cpu.numa_nodes = len(cpu.numa)
    if any(n.memory_total_bytes is None for n in cpu.numa):
        cpu.why(
            "numa",
            msg("per-node memory unknown: {reason}; no node meminfo in sysfs").format(
                reason=numactl_reason.text if numactl_reason else msg("not in numactl output")
            ),
            kind=numactl_reason.kind if numactl_reason else "unparsable",
        )


def _governor(host: Host) -> tuple[str | None, Unknown | None]:
    paths = host.glob("/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor")
    values = [v.strip() for v in (host.read_file(p) for p in paths) if v and v.strip()]
    if not values:
        return None, Unknown(
            kind="not_applicable",
            text=msg("no cpufreq scaling_governor in sysfs (no cpufreq driver: usual inside VMs)"),
        )
    counts = Counter(values)
    if len(counts) == 1:
        return values[0], None
    return "mixed: " + joined(", ", (f"{g} ({n})" for g, n in counts.most_common())), None
