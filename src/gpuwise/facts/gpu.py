"""GPU facts: which NVIDIA GPUs a machine has and the state that matters for training.

Sources, best first: NVML (`nvml`, live and in captures), `nvidia-smi -q -x` (captures and
live fallback), and the `nvidia-smi -q` text report (hand-built captures). All three give
the same Gpu model (fields and clock-event names are shared data in gpu_fields.py).
Warnings from plain `nvidia-smi` (infoROM corruption, lost GPUs) are attached by bus id.
A machine without GPUs or driver is a normal result: no GPUs, source "none", a reason.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pydantic import ValidationError

from gpuwise.capture.host import Host
from gpuwise.documents.ids import NVML_FORMAT
from gpuwise.facts.gpu_fields import GpuResult, bus_id_key, clock_event_names, mark_unknown, placeholder_kind
from gpuwise.facts.gpu_text import parse_nvidia_smi_q_text, parse_nvidia_smi_warnings
from gpuwise.facts.gpu_xml import parse_nvidia_smi_xml
from gpuwise.facts.models import Gpu, GpuProbe, PcieLink, Unknown, UnknownKind, combined
from gpuwise.facts.sourcing import command_text, failure_kind
from gpuwise.i18n import joined, msg

__all__ = [
    "Gpu",
    "GpuProbe",
    "GpuResult",
    "attach_warnings",
    "collect_gpus",
    "parse_nvidia_smi_q_text",
    "parse_nvidia_smi_warnings",
    "parse_nvidia_smi_xml",
    "parse_nvml_json",
]


_GPU_FIELDS = tuple(f for f in Gpu.model_fields if f not in ("unknown", "pcie", "warnings", "error"))
_PCIE_FIELDS = tuple(f for f in PcieLink.model_fields if f != "unknown")


def parse_nvml_json(text: str) -> GpuResult:
    """Parse the gpuwise-nvml/1 document written by capture/nvml.py; never raises."""
    probe = GpuProbe(source="none")
    result = GpuResult(gpus=[], probe=probe)
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        probe.error = msg("NVML output is not valid JSON ({error})").format(error=exc)
        return result
    if not isinstance(doc, dict) or doc.get("format") != NVML_FORMAT:
        got = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        probe.error = msg("NVML output has format {got}, expected {expected}").format(
            got=repr(got), expected=repr(NVML_FORMAT)
        )
        return result
    result.driver_version = _str_or_none(doc.get("driver_version"))
    result.cuda_driver_version = _str_or_none(doc.get("cuda_driver_version"))
    count = doc.get("device_count")
    if isinstance(count, int) and not isinstance(count, bool):
        probe.attached_gpus = count
    if doc.get("error"):
        probe.error = str(doc["error"])
    gpus = doc.get("gpus")
    for entry in gpus if isinstance(gpus, list) else []:
        if isinstance(entry, dict):
            result.gpus.append(_gpu_from_nvml(entry))
    if probe.error is None:
        probe.source = "nvml"
    if probe.attached_gpus is not None and probe.attached_gpus != len(result.gpus):
        probe.notes.append(
            msg("NVML counts {attached} GPUs but read {read}").format(
                attached=probe.attached_gpus, read=len(result.gpus)
            )
        )
    return result


def _gpu_from_nvml(entry: dict[str, Any]) -> Gpu:
    index = entry.get("index") if isinstance(entry.get("index"), int) else None
    if entry.get("error"):
        message = str(entry["error"])
        gpu = Gpu(index=index, error=message)
        gpu.why("*", message, kind="failed")
        return gpu
    data: dict[str, Any] = {f: entry.get(f) for f in _GPU_FIELDS if f in entry}
    unknown = dict(entry.get("unknown")) if isinstance(entry.get("unknown"), dict) else {}
    garbled = _decode_clock_events(entry, data, unknown)
    pcie = entry.get("pcie") if isinstance(entry.get("pcie"), dict) else {}
    data["pcie"] = {f: pcie.get(f) for f in _PCIE_FIELDS if f in pcie}
    data["warnings"] = [str(w) for w in entry.get("warnings") or [] if isinstance(w, str)]
    not_finite = _drop_non_finite(data) + [(f"pcie.{n}", v) for n, v in _drop_non_finite(data["pcie"])]
    gpu, bad = _validate(data)
    for name, reason in unknown.items():
        if _known_field(str(name)):
            mark_unknown(gpu, str(name), f"NVML: {reason}", kind=placeholder_kind(str(reason)))
    for name in bad:
        mark_unknown(gpu, name, msg("NVML gave a value of the wrong type"), kind="unparsable")
    for name, value in not_finite:
        mark_unknown(
            gpu, name, msg("NVML gave {value}, not a finite number").format(value=value), kind="unparsable"
        )
    if garbled:
        gpu.why("clock_event_reasons", f"NVML: {garbled}", kind="unparsable")
    for name in _GPU_FIELDS:
        if getattr(gpu, name) is None and name not in gpu.unknown:
            gpu.why(name, msg("not in the NVML output"), kind="unparsable")
    for name in _PCIE_FIELDS:
        if getattr(gpu.pcie, name) is None and name not in gpu.pcie.unknown:
            gpu.pcie.why(name, msg("not in the NVML output"), kind="unparsable")
    return gpu


def _drop_non_finite(data: dict[str, Any]) -> list[tuple[str, str]]:
    """Remove NaN and infinite numbers (json.loads accepts `NaN`, `Infinity`); return (field, value)."""
    dropped = [(k, repr(v)) for k, v in data.items() if isinstance(v, float) and not math.isfinite(v)]
    for name, _value in dropped:
        del data[name]
    return dropped


def _decode_clock_events(entry: dict[str, Any], data: dict[str, Any], unknown: dict[str, Any]) -> str | None:
    """NVML's raw clock-event bit mask -> reason names. Captures made before the mask was stored
    carry the decoded names list `clock_event_reasons` instead, which is read as it is.
    Returns why a mask that is there is unusable (None when it is fine or absent)."""
    if "clock_event_reasons_mask" not in entry:
        return None
    mask = entry["clock_event_reasons_mask"]
    why = unknown.pop("clock_event_reasons_mask", None)
    if isinstance(mask, int) and not isinstance(mask, bool) and mask >= 0:
        data["clock_event_reasons"] = clock_event_names(mask)
    elif why is not None:
        unknown["clock_event_reasons"] = why
    elif mask is not None:
        return msg("clock-event reasons {mask} are not a bit mask").format(mask=repr(mask))
    return None


def _validate(data: dict[str, Any]) -> tuple[Gpu, list[str]]:
    """Build the Gpu, dropping (and naming) the fields whose values have the wrong type."""
    bad: list[str] = []
    for _attempt in range(len(_GPU_FIELDS) + len(_PCIE_FIELDS) + 2):
        try:
            return Gpu.model_validate(data), bad
        except ValidationError as exc:
            loc = exc.errors()[0]["loc"]
            if loc and loc[0] == "pcie" and len(loc) > 1 and isinstance(data.get("pcie"), dict):
                data["pcie"].pop(loc[1], None)
                bad.append(f"pcie.{loc[1]}")
            elif loc and loc[0] in data:
                data.pop(loc[0])
                bad.append(str(loc[0]))
            else:
                break
    return Gpu(index=data.get("index") if isinstance(data.get("index"), int) else None), bad + ["*"]


def _known_field(name: str) -> bool:
    head, _dot, tail = name.partition(".")
    return name in _GPU_FIELDS or (head == "pcie" and tail in _PCIE_FIELDS)


def _str_or_none(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


# ---------------------------------------------------------------- the collector


# lspci device lines: "3b:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)".
# NVSwitches are "Bridge" and a card's HDMI audio is "Audio device": not GPUs.
_PCI_NVIDIA_GPU = re.compile(
    r"^((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+"
    r"(?:VGA compatible controller|3D controller|Display controller)[^:]*:\s*NVIDIA Corporation",
    re.MULTILINE,
)


def pci_nvidia_gpus(lspci_text: str) -> list[str]:
    """Bus ids of the NVIDIA GPUs in `lspci` output: present on the bus whether or not a driver answers."""
    return _PCI_NVIDIA_GPU.findall(lspci_text)


def collect_gpus(host: Host) -> GpuResult:
    """GPU facts from the best source the host has: NVML, then `nvidia-smi -q -x`, then `-q` text."""
    result = _collect_gpus(host)
    text, reason = command_text(host, "lspci-vvv")
    if text is None:
        result.probe.why("pci_gpus", reason)
    else:
        result.probe.pci_gpus = pci_nvidia_gpus(text)
    return result


def _collect_gpus(host: Host) -> GpuResult:
    tried: list[str] = []
    kinds: list[UnknownKind] = []  # the kind of each entry of `tried`
    nvml_error: str | None = None
    chosen: GpuResult | None = None

    nvml = host.run("nvml")
    if nvml is None:
        tried.append(msg("NVML: not captured"))
        kinds.append("not_captured")
    elif not nvml.ok:
        nvml_error = msg("NVML collector: {reason}").format(reason=nvml.reason())
        tried.append(nvml_error)
        kinds.append(failure_kind(nvml))
    else:
        parsed = parse_nvml_json(nvml.stdout)
        if parsed.probe.error is None:
            chosen = parsed
        else:
            nvml_error = parsed.probe.error
            tried.append(nvml_error)
            kinds.append("failed")

    for command_id, parse in (
        ("nvidia-smi-q-x", parse_nvidia_smi_xml),
        ("nvidia-smi-q", parse_nvidia_smi_q_text),
    ):
        if chosen is not None:
            break
        r = host.run(command_id)
        if r is None:
            if command_id == "nvidia-smi-q-x":  # the text report exists only in hand-built captures
                tried.append(msg("`{command}`: not captured").format(command=command_id))
                kinds.append("not_captured")
        elif not r.ok:
            tried.append(r.reason())
            kinds.append(failure_kind(r))
        else:
            parsed = parse(r.stdout)
            if parsed.gpus:
                chosen = parsed
            else:
                tried.append(
                    msg("`{command}`: no GPU in the output ({notes})").format(
                        command=command_id, notes=joined("; ", parsed.probe.notes) or msg("empty")
                    )
                )
                kinds.append("not_applicable")

    if chosen is None:
        probe = GpuProbe(source="none", error=nvml_error)
        probe.notes.append(msg("no NVIDIA GPU found: {tried}").format(tried=joined("; ", tried)))
        reasons = [Unknown(kind=k, text=t) for k, t in zip(kinds, tried, strict=True)]
        probe.why("attached_gpus", combined(reasons, msg("no GPU source answered")))
        result = GpuResult(gpus=[], probe=probe)
        attach_warnings(
            host, result
        )  # a plain `nvidia-smi` table alone still carries infoROM/lost-GPU warnings
        return result

    chosen.probe.error = nvml_error
    if nvml_error and chosen.probe.source != "nvml":
        chosen.probe.notes.append(
            msg("used `{source}` because {error}").format(source=chosen.probe.source, error=nvml_error)
        )
    # NVML checks the infoROM and reports lost GPUs itself; the plain nvidia-smi table is read only for the
    # other sources. Deciding by source, not by host kind, keeps a live probe and its capture's replay equal.
    if chosen.probe.source != "nvml":
        attach_warnings(host, chosen)
    return chosen


def attach_warnings(host: Host, result: GpuResult) -> None:
    """Add the warnings of the host's plain `nvidia-smi` output to the GPUs they name (by bus id)."""
    r = host.run("nvidia-smi")
    if r is None or r.status != "ok":
        return
    # nvidia-smi exits non-zero when a GPU is lost, and the warnings are the point then: parse anyway.
    warned = parse_nvidia_smi_warnings(r.stdout + "\n" + r.stderr)
    by_bus = {bus_id_key(g.pci_bus_id): g for g in result.gpus if bus_id_key(g.pci_bus_id) is not None}
    for w in warned.gpus:
        target = by_bus.get(bus_id_key(w.pci_bus_id))
        if target is None:
            result.probe.warnings.extend(m for m in w.warnings if m not in result.probe.warnings)
            continue
        target.warnings.extend(m for m in w.warnings if m not in target.warnings)
    result.probe.warnings.extend(m for m in warned.probe.warnings if m not in result.probe.warnings)
