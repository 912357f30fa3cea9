"""GPU topology: how GPUs and NICs connect (`nvidia-smi topo -m`) and each GPU's NVLinks (`nvlink -s`).

`topo -m` prints a matrix whose cells say what lies between two devices: X (self), NV#
(# bonded NVLinks), PIX, PXB, PHB, NODE, SYS (ever further through PCIe and the CPUs),
then each GPU's CPU and NUMA affinity, and a "NIC Legend" naming NIC0.. as mlx5_0..
Older drivers put the RDMA device names (mlx5_0) in the header directly. `topo -mp`
prints the same layout without NVLink. Header rows may carry ANSI underline escapes.
"""

from __future__ import annotations

import re

from gpuwise.capture.host import Host
from gpuwise.facts.models import GpuNvLinks, NvLink, Topology
from gpuwise.facts.sourcing import failure_kind
from gpuwise.i18n import joined, msg

__all__ = ["Topology", "collect_topology", "parse_nvlink_s", "parse_topo_m"]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_GPU_LABEL = re.compile(r"^GPU\d+$")
# Column headings that are not devices; they may contain spaces.
_ATTRIBUTE_COLUMNS = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
_HEADER_TOKEN = re.compile(joined("|", (re.escape(c) for c in _ATTRIBUTE_COLUMNS)) + r"|\S+")
_NIC_LEGEND = re.compile(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$")
_CPULIST = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")
_TOOL = "nvidia-smi topo -m"


def parse_topo_m(text: str) -> Topology:
    """Parse `nvidia-smi topo -m` (or `-mp`); garbage gives a Topology whose unknowns say why."""
    topo = Topology()
    lines = [_ANSI.sub("", raw).rstrip() for raw in text.splitlines()]
    header_at = next((i for i, line in enumerate(lines) if _is_header(line)), None)
    if header_at is None:
        for name in ("gpu_links", "gpu_nic_links", "gpu_cpu_affinity", "gpu_numa_affinity"):
            topo.why(name, msg("no GPU matrix in the `{tool}` output").format(tool=_TOOL), kind="unparsable")
        return topo

    columns = _HEADER_TOKEN.findall(lines[header_at])
    devices = [c for c in columns if c not in _ATTRIBUTE_COLUMNS]
    attributes = [c for c in columns if c in _ATTRIBUTE_COLUMNS]
    topo.gpu_names = [d for d in devices if _GPU_LABEL.match(d)]
    topo.nic_names = [d for d in devices if not _GPU_LABEL.match(d)]

    rows: dict[str, tuple[list[str], list[str]]] = {}
    for line in lines[header_at + 1 :]:
        label = line.split(maxsplit=1)[0] if line.strip() else ""
        if label in devices and label not in rows:
            rows[label] = _split_row(line, len(devices))
        legend = _NIC_LEGEND.match(line)
        if legend:
            topo.nic_devices[legend.group(1)] = legend.group(2)

    gpu_cols = [devices.index(g) for g in topo.gpu_names]
    nic_cols = [devices.index(n) for n in topo.nic_names]
    gpu_rows = [rows.get(g) for g in topo.gpu_names]
    missing = [g for g, r in zip(topo.gpu_names, gpu_rows, strict=True) if r is None]
    if missing:
        topo.why(
            "gpu_links",
            msg("`{tool}` has no row for {gpus} (truncated output?)").format(
                tool=_TOOL, gpus=joined(", ", missing)
            ),
            kind="unparsable",
        )
    short = [
        g for g, r in zip(topo.gpu_names, gpu_rows, strict=True) if r is not None and len(r[0]) < len(devices)
    ]
    if short:
        topo.why(
            "gpu_links",
            msg("`{tool}` rows for {gpus} are incomplete; missing cells are ''").format(
                tool=_TOOL, gpus=joined(", ", short)
            ),
            kind="unparsable",
        )

    def cell(row: tuple[list[str], list[str]] | None, col: int) -> str:
        return row[0][col] if row is not None and col < len(row[0]) else ""

    topo.gpu_links = [[cell(r, c) for c in gpu_cols] for r in gpu_rows] if topo.gpu_names else None
    if topo.gpu_links is None:
        topo.why(
            "gpu_links", msg("no GPU columns in the `{tool}` header").format(tool=_TOOL), kind="unparsable"
        )
    if nic_cols:
        topo.gpu_nic_links = [[cell(r, c) for c in nic_cols] for r in gpu_rows]
    else:
        topo.why("gpu_nic_links", msg("`{tool}` shows no NICs").format(tool=_TOOL), kind="not_applicable")
    _fill_affinity(topo, attributes, gpu_rows)
    return topo


def _is_header(line: str) -> bool:
    tokens = line.split()
    return bool(tokens) and tokens[0] == "GPU0" and "X" not in tokens


def _split_row(line: str, n_devices: int) -> tuple[list[str], list[str]]:
    """(device cells, attribute cells) of one row.

    nvidia-smi separates cells with tabs and pads the NUMA column with an extra tab, and
    leaves affinity cells empty on some hosts: with tabs present, empty fields are kept in
    the attribute part. Outputs pasted with tabs expanded to spaces are split on whitespace.
    """
    if "\t" in line:
        fields = [f.strip() for f in line.split("\t")][1:]
        cells: list[str] = []
        while fields and len(cells) < n_devices:
            f = fields.pop(0)
            if f:
                cells.append(f)
        return cells, fields
    tokens = line.split()[1:]
    return tokens[:n_devices], tokens[n_devices:]


def _fill_affinity(topo: Topology, attributes: list[str], gpu_rows: list) -> None:
    if "CPU Affinity" not in attributes:
        topo.why(
            "gpu_cpu_affinity",
            msg("`{tool}` has no CPU Affinity column").format(tool=_TOOL),
            kind="unparsable",
        )
    if "NUMA Affinity" not in attributes:
        topo.why(
            "gpu_numa_affinity",
            msg("`{tool}` has no NUMA Affinity column").format(tool=_TOOL),
            kind="unparsable",
        )
    if "CPU Affinity" not in attributes and "NUMA Affinity" not in attributes:
        return
    cpus: list[str | None] = []
    numas: list[int | None] = []
    for name, row in zip(topo.gpu_names, gpu_rows, strict=True):
        values = dict(zip(attributes, row[1], strict=False)) if row is not None else {}
        cpu = values.get("CPU Affinity", "")
        if _CPULIST.match(cpu):
            cpus.append(cpu)
        else:
            cpus.append(None)
            topo.why(
                "gpu_cpu_affinity",
                msg("{gpu}: CPU affinity shown as {value}").format(gpu=name, value=repr(cpu))
                if cpu
                else msg("{gpu}: no CPU affinity shown").format(gpu=name),
                kind="not_applicable" if cpu else "unparsable",
            )
        numa = values.get("NUMA Affinity", "")
        if numa.isdigit():
            numas.append(int(numa))
        else:
            numas.append(None)
            topo.why(
                "gpu_numa_affinity",
                msg("{gpu}: NUMA affinity shown as {value}").format(gpu=name, value=repr(numa))
                if numa
                else msg("{gpu}: no NUMA affinity shown").format(gpu=name),
                kind="not_applicable" if numa else "unparsable",
            )
    if "CPU Affinity" in attributes:
        topo.gpu_cpu_affinity = cpus
    if "NUMA Affinity" in attributes:
        topo.gpu_numa_affinity = numas


# ---------------------------------------------------------------- nvidia-smi nvlink -s

_NVLINK_GPU = re.compile(r"^\s*GPU\s+(\d+)\s*:")
_NVLINK_LINK = re.compile(r"^\s*Link\s+(\d+)\s*:\s*(.+?)\s*$")
_SPEED = re.compile(r"^([0-9.]+)\s*GB/s$", re.IGNORECASE)
_NVLINK_NAME = re.compile(r"^\s*(.+?)\s*(?:\(UUID:.*)?$")
_ALL_INACTIVE = re.compile(r"all links are in-?active", re.IGNORECASE)


def parse_nvlink_s(text: str) -> list[GpuNvLinks]:
    """Per GPU, its NVLinks from `nvidia-smi nvlink -s`: speed in GB/s, or inactive."""
    return _parse_nvlink(text)[0]


def _parse_nvlink(text: str) -> tuple[list[GpuNvLinks], list[str]]:
    """(GPUs with their links, messages nvidia-smi printed instead of links)."""
    gpus: list[GpuNvLinks] = []
    messages: list[str] = []
    for line in _ANSI.sub("", text).splitlines():
        gpu = _NVLINK_GPU.match(line)
        if gpu:
            name = _NVLINK_NAME.match(line[gpu.end() :])
            gpus.append(GpuNvLinks(gpu_index=int(gpu.group(1)), name=name.group(1) if name else None))
            continue
        link = _NVLINK_LINK.match(line)
        if link and gpus:
            state = link.group(2)
            speed = _SPEED.match(state)
            active = speed is not None or "inactive" not in state.lower()
            gpus[-1].links.append(
                NvLink(
                    link=int(link.group(1)),
                    active=active,
                    speed_gb_s=float(speed.group(1)) if speed else None,
                )
            )
        elif line.strip() and gpus and _ALL_INACTIVE.search(line):
            gpus[-1].all_inactive = True  # a link state, not "not applicable": the rule judges it
        elif line.strip() and gpus:
            message = f"GPU {gpus[-1].gpu_index}: {line.strip()}"
            if message not in messages:
                messages.append(message)
    return gpus, messages


# ---------------------------------------------------------------- the collector


def collect_topology(host: Host) -> Topology:
    """Topology from the captured `nvidia-smi topo -m` and `nvidia-smi nvlink -s`."""
    r = host.run("nvidia-smi-topo-m")
    if r is None:
        topo = Topology()
        topo.why(
            "gpu_links",
            msg("`{command}` was not captured").format(command="nvidia-smi topo -m"),
            kind="not_captured",
        )
    elif not r.ok:
        topo = Topology()
        topo.why("gpu_links", r.reason(), kind=failure_kind(r))
    else:
        topo = parse_topo_m(r.stdout)

    n = host.run("nvidia-smi-nvlink-s")
    if n is None:
        topo.why(
            "nvlinks",
            msg("`{command}` was not captured").format(command="nvidia-smi nvlink -s"),
            kind="not_captured",
        )
    elif not n.ok:
        topo.why("nvlinks", n.reason(), kind=failure_kind(n))
    else:
        links, messages = _parse_nvlink(n.stdout)
        topo.nvlinks = links
        if messages:
            topo.why(
                "nvlinks", joined("; ", messages), kind="not_applicable"
            )  # e.g. "not supported in MIG mode"
        elif not links:
            topo.why("nvlinks", msg("`nvidia-smi nvlink -s` listed no GPUs"), kind="unparsable")
    return topo
