"""The NVML boundary: the only gpuwise module that imports pynvml (nvidia-ml-py).

`collect_json(env)` reads every GPU through NVML and returns a JSON document (format
"gpuwise-nvml/1") that a capture stores as commands/nvml.txt and that
`gpuwise.facts.gpu.parse_nvml_json` turns into Gpu facts. Nothing here raises:

- no driver / no library: the document's "error" says why and "gpus" is empty;
- a field the GPU or driver does not support: that field is null and the GPU's
  "unknown" maps the field to NVML's reason;
- a GPU whose handle cannot be opened (e.g. "GPU is lost"): an entry with its index
  and an "error", and the other GPUs are still read.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
from collections.abc import Callable
from typing import Any

NVML_FORMAT = "gpuwise-nvml/1"
_ENABLED = 1  # NVML_FEATURE_ENABLED and NVML_DEVICE_MIG_ENABLE are both 1 in nvml.h


def collect_json(env: dict[str, str]) -> str:
    """Read all GPUs through NVML; return the gpuwise-nvml/1 JSON document (never raises).

    `env` is the probed environment. NVML ignores CUDA_VISIBLE_DEVICES and sees every GPU,
    which is what a machine probe wants, so it is not used.
    """
    del env
    return json.dumps(collect(), sort_keys=True)


def collect() -> dict[str, Any]:
    """The document as a dict; see the module docstring."""
    doc: dict[str, Any] = {
        "format": NVML_FORMAT,
        "error": None,
        "driver_version": None,
        "cuda_driver_version": None,
        "device_count": None,
        "gpus": [],
        "unknown": {},
    }
    try:
        import pynvml
    except ImportError as exc:
        doc["error"] = f"nvidia-ml-py is not installed ({exc}). To fix: pip install nvidia-ml-py"
        return doc
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # NVMLError_LibraryNotFound, DriverNotLoaded, OSError from ctypes, ...
        doc["error"] = f"NVML init failed: {_reason(exc)}"
        return doc
    try:
        host = _Reader(doc, doc["unknown"])
        host("driver_version", lambda: _text(pynvml.nvmlSystemGetDriverVersion()))
        host("cuda_driver_version", lambda: _cuda_version(pynvml.nvmlSystemGetCudaDriverVersion()))
        host("device_count", lambda: int(pynvml.nvmlDeviceGetCount()))
        if doc["device_count"] is None:
            doc["error"] = f"NVML could not count the GPUs: {doc['unknown']['device_count']}"
        for index in range(doc["device_count"] or 0):
            doc["gpus"].append(_read_gpu(pynvml, index))
    except Exception as exc:  # a bug or a dying driver mid-read: keep what was read, say why
        doc["error"] = f"NVML read failed: {_reason(exc)}"
    finally:
        with contextlib.suppress(Exception):  # nothing useful to do: the probe is done with NVML either way
            pynvml.nvmlShutdown()
    return doc


class _Reader:
    """Call one NVML getter; on any failure store None and the reason under `unknown`."""

    def __init__(self, target: dict[str, Any], unknown: dict[str, str], prefix: str = ""):
        self.target, self.unknown, self.prefix = target, unknown, prefix

    def __call__(self, key: str, getter: Callable[[], Any]) -> None:
        try:
            self.target[key] = getter()
        except Exception as exc:
            self.target[key] = None
            self.unknown[self.prefix + key] = _reason(exc)


def _read_gpu(nvml: Any, index: int) -> dict[str, Any]:
    try:
        h = nvml.nvmlDeviceGetHandleByIndex(index)
    except Exception as exc:
        return {"index": index, "error": f"NVML could not open GPU {index}: {_reason(exc)}"}
    gpu: dict[str, Any] = {"index": index, "unknown": {}, "warnings": [], "pcie": {}}
    read = _Reader(gpu, gpu["unknown"])
    pcie = _Reader(gpu["pcie"], gpu["unknown"], prefix="pcie.")

    read("name", lambda: _text(nvml.nvmlDeviceGetName(h)))
    read("uuid", lambda: _text(nvml.nvmlDeviceGetUUID(h)))
    read("serial", lambda: _text(nvml.nvmlDeviceGetSerial(h)))
    read("pci_bus_id", lambda: _text(nvml.nvmlDeviceGetPciInfo(h).busId))
    read("memory_total_bytes", lambda: int(nvml.nvmlDeviceGetMemoryInfo(h).total))
    read("compute_capability", lambda: "{}.{}".format(*nvml.nvmlDeviceGetCudaComputeCapability(h)))
    pcie("gen_current", lambda: int(nvml.nvmlDeviceGetCurrPcieLinkGeneration(h)))
    # The max the GPU *and* the slot allow; nvidia-smi prints the same value as "Max".
    pcie("gen_max", lambda: int(nvml.nvmlDeviceGetMaxPcieLinkGeneration(h)))
    pcie("width_current", lambda: int(nvml.nvmlDeviceGetCurrPcieLinkWidth(h)))
    pcie("width_max", lambda: int(nvml.nvmlDeviceGetMaxPcieLinkWidth(h)))
    read("power_limit_watts", lambda: nvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0)  # NVML gives mW
    read("power_limit_default_watts", lambda: nvml.nvmlDeviceGetPowerManagementDefaultLimit(h) / 1000.0)
    read("power_limit_max_watts", lambda: nvml.nvmlDeviceGetPowerManagementLimitConstraints(h)[1] / 1000.0)
    read("power_draw_watts", lambda: nvml.nvmlDeviceGetPowerUsage(h) / 1000.0)
    read("performance_state", lambda: f"P{int(nvml.nvmlDeviceGetPerformanceState(h))}")
    read("utilization_gpu_percent", lambda: float(nvml.nvmlDeviceGetUtilizationRates(h).gpu))
    read("process_count", lambda: len(nvml.nvmlDeviceGetComputeRunningProcesses(h)))
    read("persistence_mode", lambda: nvml.nvmlDeviceGetPersistenceMode(h) == _ENABLED)
    read("ecc_enabled", lambda: nvml.nvmlDeviceGetEccMode(h)[0] == _ENABLED)
    read("ecc_pending_enabled", lambda: nvml.nvmlDeviceGetEccMode(h)[1] == _ENABLED)
    uncorrected = nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED
    read(
        "ecc_volatile_uncorrectable",
        lambda: int(nvml.nvmlDeviceGetTotalEccErrors(h, uncorrected, nvml.NVML_VOLATILE_ECC)),
    )
    read(
        "ecc_aggregate_uncorrectable",
        lambda: int(nvml.nvmlDeviceGetTotalEccErrors(h, uncorrected, nvml.NVML_AGGREGATE_ECC)),
    )
    sbe = nvml.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS
    read("retired_pages_sbe", lambda: len(nvml.nvmlDeviceGetRetiredPages(h, sbe)))
    dbe = nvml.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR
    read("retired_pages_dbe", lambda: len(nvml.nvmlDeviceGetRetiredPages(h, dbe)))
    read("retired_pages_pending", lambda: nvml.nvmlDeviceGetRetiredPagesPendingStatus(h) == _ENABLED)
    # (corrected rows, uncorrected rows, remap pending, remap failure occurred)
    read("remapped_rows_pending", lambda: bool(nvml.nvmlDeviceGetRemappedRows(h)[2]))
    read("remapped_rows_failure", lambda: bool(nvml.nvmlDeviceGetRemappedRows(h)[3]))
    read("mig_enabled", lambda: nvml.nvmlDeviceGetMigMode(h)[0] == _ENABLED)
    read("sm_clock_mhz", lambda: int(nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_SM)))
    read("sm_clock_max_mhz", lambda: int(nvml.nvmlDeviceGetMaxClockInfo(h, nvml.NVML_CLOCK_SM)))
    read("temperature_c", lambda: float(nvml.nvmlDeviceGetTemperature(h, nvml.NVML_TEMPERATURE_GPU)))
    # Stored as NVML returned it; facts/gpu_fields.py decodes the bits into names.
    read("clock_event_reasons_mask", lambda: _clock_event_mask(nvml, h))
    read("fabric_state", lambda: _fabric_state(nvml, h))
    _check_inforom(nvml, h, gpu)
    return gpu


def _clock_event_mask(nvml: Any, h: Any) -> int:
    # Renamed from "throttle" to "clocks event" in R535; older bindings only have the old name.
    getter = (
        getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
        or nvml.nvmlDeviceGetCurrentClocksThrottleReasons
    )
    return int(getter(h))


_FABRIC_STATES = {
    1: "Not Started",
    2: "In Progress",
    3: "Completed",
}  # nvmlGpuFabricState_t, as nvidia-smi words it


def _fabric_state(nvml: Any, h: Any) -> str:
    info = nvml.c_nvmlGpuFabricInfo_t()
    nvml.nvmlDeviceGetGpuFabricInfo(h, ctypes.byref(info))
    state = int(info.state)
    if state not in _FABRIC_STATES:  # 0 = NVML_GPU_FABRIC_STATE_NOT_SUPPORTED: no NVSwitch fabric
        raise LookupError("Not Supported (no NVSwitch fabric)")
    return _FABRIC_STATES[state]


def _check_inforom(nvml: Any, h: Any, gpu: dict[str, Any]) -> None:
    """Report a corrupted infoROM the way plain `nvidia-smi` does, so NVML needs no second tool."""
    validate = getattr(nvml, "nvmlDeviceValidateInforom", None)
    if validate is None:
        return
    try:
        validate(h)
    except Exception as exc:
        if getattr(exc, "value", None) == getattr(nvml, "NVML_ERROR_CORRUPTED_INFOROM", object()):
            gpu["warnings"].append("infoROM is corrupted")
        # NotSupported and similar: nothing to report


def _cuda_version(v: int) -> str:
    """12040 -> '12.4' (NVML encodes major*1000 + minor*10)."""
    v = int(v)
    return f"{v // 1000}.{(v % 1000) // 10}"


def _text(value: Any) -> str:
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return text or type(exc).__name__
