"""Parse the text reports of nvidia-smi: `nvidia-smi -q` / `-a`, and the plain table's warnings.

The `-q` report is an indented tree of "Label : value" lines. It is read into that tree
first and then looked up with the same field table as the XML, so both sources give the
same Gpu model. `nvidia-smi -q -d SECTION` reports (only some sections) parse too: the
fields they leave out are unknown with a reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuwise.facts.gpu_fields import (
    ECC_PARTS_TEXT,
    ECC_TOTAL_TEXT,
    TEXT_REASON_LABELS,
    GpuResult,
    bus_id_key,
    fill_fields,
    reason_from_label,
    sum_parts,
)
from gpuwise.facts.models import Gpu, GpuProbe
from gpuwise.i18n import msg

TOOL = "nvidia-smi -q"
_BUS_ID = r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]"
_GPU_HEADER = re.compile(rf"^GPU\s+({_BUS_ID})\s*$")
# "Label      : value" (nvidia-smi pads the label; a colon inside a value, as in a bus id, is kept)
_LABEL_VALUE = re.compile(r"^(?P<label>\S.*?)\s+:(?:\s*(?P<value>.*))?$")


@dataclass
class _Node:
    value: str | None  # None for a section heading ("PCI", "ECC Errors")
    children: dict[str, _Node] = field(default_factory=dict)

    def get(self, path: tuple[str, ...]) -> _Node | None:
        node: _Node | None = self
        for key in path:
            node = node.children.get(key) if node is not None else None
        return node

    def scalar(self, path: tuple[str, ...]) -> str | None:
        node = self.get(path)
        if node is None:
            return None
        return node.value if node.value is not None else ""


@dataclass
class _Report:
    header: dict[str, str] = field(default_factory=dict)
    gpus: list[tuple[str, _Node]] = field(default_factory=list)  # (bus id, tree)


def _read_tree(text: str) -> _Report:
    report = _Report()
    stack: list[tuple[int, _Node]] = []
    for raw in text.expandtabs(8).splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith("====="):
            continue
        indent = len(line) - len(line.lstrip())
        gpu = _GPU_HEADER.match(line)
        if gpu:
            root = _Node(None)
            report.gpus.append((gpu.group(1), root))
            stack = [(-1, root)]
            continue
        m = _LABEL_VALUE.match(stripped)
        label = (m.group("label") if m else stripped).strip().lower()
        value = (m.group("value") or "").strip() if m else None
        if indent == 0:  # a header line ("Driver Version"), or the end of the GPU blocks
            if value is not None:
                report.header.setdefault(label, value)
            stack = []
            continue
        if not stack:
            continue
        while stack[-1][0] >= indent:
            stack.pop()
        node = _Node(value)
        # the first occurrence wins: repeated blocks (MIG devices, processes) are not GPU facts
        stack[-1][1].children.setdefault(label, node)
        stack.append((indent, node))
    return report


def parse_nvidia_smi_q_text(text: str) -> GpuResult:
    """Parse `nvidia-smi -q` / `nvidia-smi -a` text; never raises on garbage or truncation."""
    probe = GpuProbe(source="nvidia-smi-q")
    result = GpuResult(gpus=[], probe=probe)
    report = _read_tree(text)
    result.driver_version = report.header.get("driver version") or None
    result.cuda_driver_version = report.header.get("cuda version") or None
    attached = report.header.get("attached gpus") or report.header.get("attached gpu device count")
    if attached and attached.isdigit():
        probe.attached_gpus = int(attached)
    else:
        probe.why(
            "attached_gpus",
            msg("`{tool}` output does not give 'Attached GPUs'").format(tool=TOOL),
            kind="unparsable",
        )
    if not report.gpus:
        probe.notes.append(msg("`{tool}` output has no 'GPU <bus id>' block").format(tool=TOOL))
    for index, (bus_id, tree) in enumerate(report.gpus):
        result.gpus.append(_gpu_from_tree(index, bus_id, tree))
    if probe.attached_gpus is not None and probe.attached_gpus != len(result.gpus):
        probe.notes.append(
            msg(
                "`{tool}` reports {attached} attached GPUs but lists {listed}; parsed the ones present"
            ).format(tool=TOOL, attached=probe.attached_gpus, listed=len(result.gpus))
        )
    return result


def _gpu_from_tree(index: int, bus_id: str, tree: _Node) -> Gpu:
    gpu = Gpu(index=index)
    fill_fields(gpu, tree.scalar, lambda spec: spec.text, TOOL)
    if gpu.pci_bus_id is None:
        gpu.pci_bus_id = bus_id
        gpu.unknown.pop("pci_bus_id", None)
    for fld, scope in (
        ("ecc_volatile_uncorrectable", "volatile"),
        ("ecc_aggregate_uncorrectable", "aggregate"),
    ):
        counters = tree.get(("ecc errors", scope))
        if counters is None:
            gpu.why(fld, msg("not in this {tool} output").format(tool=TOOL), kind="unparsable")
            continue
        totals = [counters.scalar(p) for p in ECC_TOTAL_TEXT]
        paths = ECC_TOTAL_TEXT if any(t is not None for t in totals) else ECC_PARTS_TEXT
        value, reason = sum_parts([counters.scalar(p) for p in paths], TOOL)
        setattr(gpu, fld, value)
        if reason:
            gpu.why(fld, reason)
    section = tree.get(("clocks event reasons",)) or tree.get(("clocks throttle reasons",))
    if section is None:
        gpu.why("clock_event_reasons", msg("not in this {tool} output").format(tool=TOOL), kind="unparsable")
    else:
        states = list(_walk(section))
        readable = [(label, v) for label, v in states if v in ("active", "not active")]
        if readable:
            gpu.clock_event_reasons = [
                reason_from_label(lb, TEXT_REASON_LABELS) for lb, v in readable if v == "active"
            ]
        else:
            gpu.why(
                "clock_event_reasons",
                msg("{tool}: no reason has an Active/Not Active state").format(tool=TOOL),
                kind="unparsable",
            )
    processes = tree.get(("processes",))
    if processes is not None and (processes.value or "").strip().lower() == "none":
        gpu.process_count = 0
    else:
        gpu.why(
            "process_count",
            (msg("{tool}: processes not listed") if processes is None else msg("{tool}: not counted")).format(
                tool=TOOL
            ),
            kind="unparsable",
        )
    gpu.why(
        "compute_capability",
        msg("`{tool}` does not report it (NVML does)").format(tool=TOOL),
        kind="unparsable",
    )
    return gpu


def _walk(node: _Node):
    """(label, lower-case value) for every line below `node`; HW Slowdown nests its two sub-reasons."""
    for label, child in node.children.items():
        if child.value is not None:
            yield label, child.value.strip().lower()
        yield from _walk(child)


# ---------------------------------------------------------------- plain `nvidia-smi` warnings

_TABLE_ROW = re.compile(rf"^\|\s*(\d+)\s+.*?\|\s*({_BUS_ID})\s")
_WARNING = re.compile(r"^\s*WARNING:\s*(.+?)\s*$", re.IGNORECASE)
_NO_HANDLE = re.compile(r"^\s*(Unable to determine the device handle for GPU.*?)\s*$", re.IGNORECASE)
_WARNING_BUS = re.compile(rf"\bgpu\s*({_BUS_ID})", re.IGNORECASE)


def parse_nvidia_smi_warnings(text: str) -> GpuResult:
    """Warnings printed by plain `nvidia-smi` (infoROM corrupted, GPU lost, ...).

    Returns what fits in a GpuResult: one Gpu (index and bus id from the table) per GPU that
    has a warning, and warnings that name no GPU in probe.warnings.
    """
    probe = GpuProbe(source="none")
    result = GpuResult(gpus=[], probe=probe)
    index_of: dict[tuple, int] = {}
    for line in text.splitlines():
        row = _TABLE_ROW.match(line)
        if row:
            key = bus_id_key(row.group(2))
            if key is not None:
                index_of.setdefault(key, int(row.group(1)))
    by_bus: dict[tuple, Gpu] = {}
    for line in text.splitlines():
        m = _WARNING.match(line) or _NO_HANDLE.match(line)
        if m is None:
            continue
        message = m.group(1)
        bus = _WARNING_BUS.search(message)
        key = bus_id_key(bus.group(1)) if bus else None
        if key is None:
            probe.warnings.append(message)
            continue
        gpu = by_bus.get(key)
        if gpu is None:
            gpu = Gpu(index=index_of.get(key), pci_bus_id=bus.group(1))
            if gpu.index is None:
                gpu.why(
                    "index",
                    msg("the GPU named in the warning is not in the nvidia-smi table"),
                    kind="unparsable",
                )
            by_bus[key] = gpu
            result.gpus.append(gpu)
        gpu.warnings.append(message)
    return result
