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
from collections.abc import Callable
from typing import Any

from gpuwise import strictjson
from gpuwise.documents.ids import NVML_FORMAT

_ENABLED = 1  # NVML_FEATURE_ENABLED and NVML_DEVICE_MIG_ENABLE are both 1 in nvml.h


def collect_json(env: dict[str, str]) -> str:
    """Read all GPUs through NVML; return the gpuwise-nvml/1 JSON document (never raises).

    `env` is the probed environment. NVML ignores CUDA_VISIBLE_DEVICES and sees every GPU,
    which is what a machine probe wants, so it is not used.
    """
    del env
    return strictjson.dumps(collect(), sort_keys=True)  # a NaN from NVML is null + a reason, not `NaN`


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
    read("vbios_version", lambda: _text(nvml.nvmlDeviceGetVbiosVersion(h)))
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


# ---------------------------------------------------------------- fast sampling (gpuwise export / watch)


class Sampler:
    """One NVML read of what the exporter needs per scrape, with NVML kept open between reads.

    `sample()` returns {"error", "driver_version", "cuda_driver_version", "gpus": [...]} where each GPU
    is a dict of gpuwise.export.sample.GpuSample fields (None = not supported). It never raises: a
    failed read gives "error" and no GPUs, so the exporter publishes nothing stale. XID errors come
    from an NVML event set polled without waiting, so "xid_last" is the last XID seen since open()
    (0 = none), as dcgm-exporter's DCGM_FI_DEV_XID_ERRORS reports it.
    """

    def __init__(self) -> None:
        self.error: str | None = None
        self._nvml: Any = None
        self._handles: list[Any] = []
        self._static: list[dict[str, Any]] = []
        self._unsupported: set[tuple[int, str]] = set()
        self._events: Any = None
        self._xid: dict[int, int] = {}
        self._versions: dict[str, Any] = {}

    def open(self) -> None:
        try:
            import pynvml

            pynvml.nvmlInit()
            self._nvml = pynvml
            self._versions = {
                "driver_version": _text(pynvml.nvmlSystemGetDriverVersion()),
                "cuda_driver_version": _cuda_version(pynvml.nvmlSystemGetCudaDriverVersion()),
            }
            with contextlib.suppress(pynvml.NVMLError):  # events are optional (not supported in some VMs)
                self._events = pynvml.nvmlEventSetCreate()
            for index in range(int(pynvml.nvmlDeviceGetCount())):
                self._open_gpu(index)
        except Exception as exc:  # no package, no library, no driver, a GPU that fell off the bus
            self.error = f"NVML init failed: {_reason(exc)}"
            self.close()

    def _open_gpu(self, index: int) -> None:
        nvml = self._nvml
        h = nvml.nvmlDeviceGetHandleByIndex(index)
        self._handles.append(h)
        static: dict[str, Any] = {"index": index}
        for keys, getter in _STATIC_READS:
            self._read(index, static, keys, lambda g=getter: g(nvml, h))
        self._static.append(static)
        self._xid[index] = 0
        if self._events is not None:
            with contextlib.suppress(nvml.NVMLError):
                nvml.nvmlDeviceRegisterEvents(h, nvml.nvmlEventTypeXidCriticalError, self._events)

    def sample(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"error": self.error, "gpus": [], **self._versions}
        if self._nvml is None:
            return doc
        try:
            self._poll_xid()
            for index, h in enumerate(self._handles):
                gpu = dict(self._static[index])
                for keys, getter in _DYNAMIC_READS:
                    self._read(index, gpu, keys, lambda g=getter, h=h: g(self._nvml, h))
                gpu["xid_last"] = self._xid[index] if self._events is not None else None
                gpu["processes"] = gpu["processes"] or []
                doc["gpus"].append(gpu)
        except Exception as exc:  # a dying driver mid-read: publish nothing rather than half a scrape
            return {**doc, "gpus": [], "error": f"NVML read failed: {_reason(exc)}"}
        return doc

    def close(self) -> None:
        if self._nvml is not None:
            with contextlib.suppress(Exception):  # shutting down: nothing useful to do with a failure
                if self._events is not None:
                    self._nvml.nvmlEventSetFree(self._events)
                self._nvml.nvmlShutdown()
            self._nvml, self._handles, self._static = None, [], []

    def _read(
        self, index: int, out: dict[str, Any], keys: tuple[str, ...], getter: Callable[[], Any]
    ) -> None:
        """Store getter()'s values under `keys`; None for all of them when the GPU does not support it
        or we may not read it."""
        values: Any = None
        if (index, keys[0]) not in self._unsupported:
            try:
                values = getter()
            except self._nvml.NVMLError as exc:
                n = self._nvml
                soft = (
                    n.NVML_ERROR_NOT_SUPPORTED,
                    n.NVML_ERROR_FUNCTION_NOT_FOUND,
                    n.NVML_ERROR_NO_PERMISSION,
                )
                if exc.value not in soft:
                    raise  # GPU lost, driver gone, ...: the whole read fails (no stale or partial data)
                self._unsupported.add((index, keys[0]))  # ask once, not on every scrape
        for i, key in enumerate(keys):
            out[key] = None if values is None else values[i]

    def _poll_xid(self) -> None:
        while self._events is not None:
            try:
                data = self._nvml.nvmlEventSetWait_v2(self._events, 0)  # 0 ms: never blocks a scrape
            except self._nvml.NVMLError:  # NVML_ERROR_TIMEOUT: nothing pending
                return
            self._xid[int(self._nvml.nvmlDeviceGetIndex(data.device))] = int(data.eventData)


def _processes(n: Any, h: Any) -> tuple[list[dict[str, Any]]]:
    out = []
    for p in n.nvmlDeviceGetComputeRunningProcesses(h):
        used = p.usedGpuMemory  # None when the driver hides it (e.g. inside some containers)
        out.append({"pid": int(p.pid), "used_mib": None if used is None else used / 2**20})
    return (out,)


def _ecc(n: Any, h: Any) -> tuple[int, ...]:
    def total(kind: int, counter: int) -> int:
        return int(n.nvmlDeviceGetTotalEccErrors(h, kind, counter))

    corrected, uncorrected = n.NVML_MEMORY_ERROR_TYPE_CORRECTED, n.NVML_MEMORY_ERROR_TYPE_UNCORRECTED
    return (
        total(corrected, n.NVML_VOLATILE_ECC),
        total(uncorrected, n.NVML_VOLATILE_ECC),
        total(corrected, n.NVML_AGGREGATE_ECC),
        total(uncorrected, n.NVML_AGGREGATE_ECC),
    )


def _nvlink(n: Any, h: Any) -> tuple[int, int]:
    """NVLink data throughput counters in KiB, all links (scope UINT_MAX); NotSupported without NVLink."""
    fields = [
        (n.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, 0xFFFFFFFF),
        (n.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX, 0xFFFFFFFF),
    ]
    values = n.nvmlDeviceGetFieldValues(h, fields)
    if any(v.nvmlReturn != n.NVML_SUCCESS for v in values):
        raise n.NVMLError(n.NVML_ERROR_NOT_SUPPORTED)
    return int(values[0].value.ullVal), int(values[1].value.ullVal)


def _utilization(n: Any, h: Any) -> tuple[float, float]:
    u = n.nvmlDeviceGetUtilizationRates(h)
    return float(u.gpu), float(u.memory)


def _memory(n: Any, h: Any) -> tuple[float, float, float | None]:
    m = n.nvmlDeviceGetMemoryInfo(h)
    total = getattr(m, "total", None)  # nvidia-smi's "Total" (the driver's reserve included)
    return m.used / 2**20, m.free / 2**20, None if total is None else total / 2**20


# (keys, getter returning one value per key); one NVML call per row
_STATIC_READS: list[tuple[tuple[str, ...], Callable[[Any, Any], tuple]]] = [
    (("name",), lambda n, h: (_text(n.nvmlDeviceGetName(h)),)),
    (("uuid",), lambda n, h: (_text(n.nvmlDeviceGetUUID(h)),)),
    (("pci_bus_id",), lambda n, h: (_text(n.nvmlDeviceGetPciInfo(h).busId),)),
    (("sm_clock_max_mhz",), lambda n, h: (int(n.nvmlDeviceGetMaxClockInfo(h, n.NVML_CLOCK_SM)),)),
    (("mem_clock_max_mhz",), lambda n, h: (int(n.nvmlDeviceGetMaxClockInfo(h, n.NVML_CLOCK_MEM)),)),
    (("pcie_gen_max",), lambda n, h: (int(n.nvmlDeviceGetMaxPcieLinkGeneration(h)),)),
    (("pcie_width_max",), lambda n, h: (int(n.nvmlDeviceGetMaxPcieLinkWidth(h)),)),
]

_DYNAMIC_READS: list[tuple[tuple[str, ...], Callable[[Any, Any], tuple]]] = [
    (("util_gpu_pct", "util_mem_pct"), _utilization),
    (("fb_used_mib", "fb_free_mib", "fb_reported_total_mib"), _memory),
    (("temperature_c",), lambda n, h: (float(n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU)),)),
    (("power_w",), lambda n, h: (n.nvmlDeviceGetPowerUsage(h) / 1000.0,)),  # NVML gives mW
    (("power_limit_w",), lambda n, h: (n.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0,)),
    (("energy_mj",), lambda n, h: (int(n.nvmlDeviceGetTotalEnergyConsumption(h)),)),
    (("sm_clock_mhz",), lambda n, h: (int(n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM)),)),
    (("mem_clock_mhz",), lambda n, h: (int(n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_MEM)),)),
    (("clock_event_mask",), lambda n, h: (_clock_event_mask(n, h),)),
    (("pcie_gen",), lambda n, h: (int(n.nvmlDeviceGetCurrPcieLinkGeneration(h)),)),
    (("pcie_width",), lambda n, h: (int(n.nvmlDeviceGetCurrPcieLinkWidth(h)),)),
    # KB/s, each sampled by the driver over a 20 ms window (nvmlDeviceGetPcieThroughput)
    (("pcie_tx_kbps",), lambda n, h: (float(n.nvmlDeviceGetPcieThroughput(h, n.NVML_PCIE_UTIL_TX_BYTES)),)),
    (("pcie_rx_kbps",), lambda n, h: (float(n.nvmlDeviceGetPcieThroughput(h, n.NVML_PCIE_UTIL_RX_BYTES)),)),
    (("pcie_replay",), lambda n, h: (int(n.nvmlDeviceGetPcieReplayCounter(h)),)),
    (("nvlink_tx_kib", "nvlink_rx_kib"), _nvlink),
    (("ecc_sbe_volatile", "ecc_dbe_volatile", "ecc_sbe_aggregate", "ecc_dbe_aggregate"), _ecc),
    (
        ("remapped_correctable", "remapped_uncorrectable", "remap_pending", "remap_failure"),
        lambda n, h: tuple(int(v) for v in n.nvmlDeviceGetRemappedRows(h)),
    ),
    (("processes",), _processes),
]
