"""Parse `nvidia-smi -q -x` (the capture source for GPUs) into Gpu facts.

Handles the DTD versions seen in the wild (v10 .. v13): old <power_readings> and new
<gpu_power_readings>, single/double-bit ECC counters and DRAM/SRAM ones, clocks
"throttle" and clocks "event" reasons, <memory_usage> from nvidia-smi look-alikes
(ixsmi), and XML embedded in a pasted terminal session.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from gpuwise.facts.gpu_fields import (
    ECC_PARTS_XML,
    ECC_TOTAL_XML,
    XML_REASON_ALIASES,
    GpuResult,
    fill_fields,
    reason_from_label,
    sum_parts,
)
from gpuwise.facts.models import Gpu, GpuProbe
from gpuwise.i18n import msg

TOOL = "nvidia-smi -q -x"
REASON_TAG = re.compile(r"^clocks_(?:event|throttle)_reason_(.+)$")


def parse_nvidia_smi_xml(text: str) -> GpuResult:
    """Parse the XML report; garbage or truncated input gives an empty list and a note, never an exception."""
    probe = GpuProbe(source="nvidia-smi-q-x")
    result = GpuResult(gpus=[], probe=probe)
    doc = extract_document(text)
    if doc is None:
        probe.notes.append(msg("`{tool}` output holds no XML document").format(tool=TOOL))
        probe.why(
            "attached_gpus", msg("`{tool}` output holds no XML document").format(tool=TOOL), kind="unparsable"
        )
        return result
    try:
        root = ET.fromstring(doc)
    except ET.ParseError as exc:
        probe.notes.append(
            msg("`{tool}` output is not valid XML ({error}); it may be truncated").format(
                tool=TOOL, error=exc
            )
        )
        probe.why("attached_gpus", msg("unreadable XML"), kind="unparsable")
        return result

    result.driver_version = _scalar(root, "driver_version")
    result.cuda_driver_version = _scalar(root, "cuda_version")
    attached = _scalar(root, "attached_gpus")
    if attached is not None and attached.isdigit():
        probe.attached_gpus = int(attached)
    else:
        probe.why(
            "attached_gpus", msg("`{tool}` does not give attached_gpus").format(tool=TOOL), kind="unparsable"
        )

    for index, el in enumerate(root.findall("gpu")):
        result.gpus.append(_gpu_from_element(index, el))
    if probe.attached_gpus is not None and probe.attached_gpus != len(result.gpus):
        probe.notes.append(
            msg(
                "`{tool}` reports {attached} attached GPUs but lists {listed}; "
                "parsed the ones present (the file may have been trimmed)"
            ).format(tool=TOOL, attached=probe.attached_gpus, listed=len(result.gpus))
        )
    return result


def extract_document(text: str) -> str | None:
    """The XML part of the text: from '<?xml' or the *_log root to its closing tag."""
    start = re.search(r"<\?xml|<(\w+_log)\b", text)
    if start is None:
        return None
    body = text[start.start() :]
    ends = list(re.finditer(r"</\w+_log\s*>", body))
    return body[: ends[-1].end()] if ends else body


def _scalar(el: ET.Element, path: str) -> str | None:
    """Text of a leaf element; '' for an element with children; None when absent."""
    node = el.find(path)
    if node is None:
        return None
    if len(node):
        return ""
    return (node.text or "").strip()


def _gpu_from_element(index: int, el: ET.Element) -> Gpu:
    gpu = Gpu(index=index)
    fill_fields(gpu, lambda path: _scalar(el, path), lambda spec: spec.xml, TOOL)
    if gpu.pci_bus_id is None and el.get("id"):
        gpu.pci_bus_id = el.get("id")
        gpu.unknown.pop("pci_bus_id", None)
    _fill_ecc(gpu, el)
    _fill_clock_reasons(gpu, el)
    processes = el.find("processes")
    if processes is None:
        gpu.why("process_count", msg("not in this {tool} output").format(tool=TOOL), kind="unparsable")
    else:
        # compute processes ("C" or "C+G"), as NVML's compute list: a desktop's Xorg is type "G"
        kinds = [(p.findtext("type") or "C").strip().upper() for p in processes.findall("process_info")]
        gpu.process_count = sum(1 for kind in kinds if "C" in kind)
    gpu.why(
        "compute_capability",
        msg("`{tool}` does not report it (NVML does)").format(tool=TOOL),
        kind="unparsable",
    )
    return gpu


def _fill_ecc(gpu: Gpu, el: ET.Element) -> None:
    for field, scope in (
        ("ecc_volatile_uncorrectable", "volatile"),
        ("ecc_aggregate_uncorrectable", "aggregate"),
    ):
        counters = el.find(f"ecc_errors/{scope}")
        if counters is None:
            gpu.why(field, msg("not in this {tool} output").format(tool=TOOL), kind="unparsable")
            continue
        totals = [_scalar(counters, p) for p in ECC_TOTAL_XML]
        parts = (
            totals if any(t is not None for t in totals) else [_scalar(counters, p) for p in ECC_PARTS_XML]
        )
        value, reason = sum_parts(parts, TOOL)
        setattr(gpu, field, value)
        if reason:
            gpu.why(field, reason)


def _fill_clock_reasons(gpu: Gpu, el: ET.Element) -> None:
    section = el.find("clocks_event_reasons")
    if section is None:
        section = el.find("clocks_throttle_reasons")
    if section is None:
        gpu.why("clock_event_reasons", msg("not in this {tool} output").format(tool=TOOL), kind="unparsable")
        return
    active, readable = [], 0
    for child in section:
        m = REASON_TAG.match(child.tag)
        state = (child.text or "").strip().lower()
        if m is None or state not in ("active", "not active"):
            continue
        readable += 1
        if state == "active":
            active.append(reason_from_label(m.group(1), XML_REASON_ALIASES))
    if readable:
        gpu.clock_event_reasons = active
    else:
        gpu.why(
            "clock_event_reasons",
            msg("{tool}: no reason has an Active/Not Active state").format(tool=TOOL),
            kind="unparsable",
        )
