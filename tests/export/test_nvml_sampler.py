"""capture.nvml.Sampler, the exporter's per-scrape NVML read.

A fake `pynvml` in sys.modules checks the mapping, unit conversions, the ask-once cache for
unsupported fields, XID event polling and the no-stale-data rule; it checks our code, not a GPU's
numbers. The `gpu`-marked test reads a real GPU and compares with nvidia-smi.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import types

import pytest

from gpuwise.capture import nvml
from gpuwise.export.sample import GpuSample


class NVMLError(Exception):
    def __init__(self, value: int, text: str = "error"):
        super().__init__(text)
        self.value = value


NOT_SUPPORTED, TIMEOUT, GPU_LOST = 3, 10, 15


def fake_pynvml(calls: list[str], events: list[tuple[int, int]], broken: dict) -> types.ModuleType:
    """Two GPUs: GPU 0 answers everything; GPU 1 has no ECC, energy counter or NVLink."""
    m = types.ModuleType("pynvml")
    m.NVMLError = NVMLError
    m.NVML_ERROR_NOT_SUPPORTED, m.NVML_ERROR_FUNCTION_NOT_FOUND, m.NVML_SUCCESS = NOT_SUPPORTED, 13, 0
    m.NVML_ERROR_NO_PERMISSION = 4
    m.NVML_CLOCK_SM, m.NVML_CLOCK_MEM, m.NVML_TEMPERATURE_GPU = 1, 2, 0
    m.NVML_PCIE_UTIL_TX_BYTES, m.NVML_PCIE_UTIL_RX_BYTES = 0, 1
    m.NVML_MEMORY_ERROR_TYPE_CORRECTED, m.NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 0, 1
    m.NVML_VOLATILE_ECC, m.NVML_AGGREGATE_ECC = 0, 1
    m.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, m.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX = 138, 139
    m.nvmlEventTypeXidCriticalError = 8

    def on_0(fn):
        def getter(h, *args):
            calls.append(fn.__name__ if hasattr(fn, "__name__") else "call")
            if h != 0:
                raise NVMLError(NOT_SUPPORTED, "Not Supported")
            return fn(*args)

        return getter

    def utilization(h):
        if broken.get("lost"):
            raise NVMLError(GPU_LOST, "GPU is lost")
        return types.SimpleNamespace(gpu=97 if h == 0 else 3, memory=40)

    def wait(event_set, timeout_ms):
        assert timeout_ms == 0  # a scrape never blocks on events
        if not events:
            raise NVMLError(TIMEOUT, "Timeout")
        index, xid = events.pop(0)
        return types.SimpleNamespace(device=index, eventData=xid)

    def field_values(h, fields):
        ok = 0 if h == 0 else NOT_SUPPORTED
        return [
            types.SimpleNamespace(nvmlReturn=ok, value=types.SimpleNamespace(ullVal=1024 * (i + 1)))
            for i in range(2)
        ]

    m.nvmlInit = lambda: calls.append("init")
    m.nvmlShutdown = lambda: calls.append("shutdown")
    m.nvmlSystemGetDriverVersion = lambda: b"550.90.07"
    m.nvmlSystemGetCudaDriverVersion = lambda: 12040
    m.nvmlDeviceGetCount = lambda: 2
    m.nvmlDeviceGetHandleByIndex = lambda i: i
    m.nvmlDeviceGetIndex = lambda h: h
    m.nvmlEventSetCreate = lambda: "set"
    m.nvmlEventSetFree = lambda s: calls.append("free")
    m.nvmlDeviceRegisterEvents = lambda h, kind, s: calls.append(f"register{h}")
    m.nvmlEventSetWait_v2 = wait
    m.nvmlDeviceGetName = lambda h: b"Fake H100"
    m.nvmlDeviceGetUUID = lambda h: f"GPU-{h}"
    m.nvmlDeviceGetPciInfo = lambda h: types.SimpleNamespace(busId=f"00000000:0{h}:00.0")
    m.nvmlDeviceGetMaxClockInfo = lambda h, c: 1980 if c == 1 else 2619
    m.nvmlDeviceGetMaxPcieLinkGeneration = lambda h: 5
    m.nvmlDeviceGetMaxPcieLinkWidth = lambda h: 16
    m.nvmlDeviceGetUtilizationRates = utilization
    m.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(used=2 * 2**30, free=78 * 2**30)
    m.nvmlDeviceGetTemperature = lambda h, s: 61
    m.nvmlDeviceGetPowerUsage = lambda h: 650_000  # mW
    m.nvmlDeviceGetEnforcedPowerLimit = lambda h: 700_000
    m.nvmlDeviceGetTotalEnergyConsumption = on_0(lambda: 123_456)
    m.nvmlDeviceGetClockInfo = lambda h, c: 1755
    m.nvmlDeviceGetCurrentClocksEventReasons = lambda h: 0x4
    m.nvmlDeviceGetCurrPcieLinkGeneration = lambda h: 4
    m.nvmlDeviceGetCurrPcieLinkWidth = lambda h: 16
    m.nvmlDeviceGetPcieThroughput = lambda h, counter: 1000 + counter
    m.nvmlDeviceGetPcieReplayCounter = lambda h: 0
    m.nvmlDeviceGetFieldValues = field_values
    m.nvmlDeviceGetTotalEccErrors = on_0(lambda kind, scope: kind * 10 + scope)
    m.nvmlDeviceGetRemappedRows = lambda h: (0, 0, 0, 0)
    m.nvmlDeviceGetComputeRunningProcesses = lambda h: (
        [types.SimpleNamespace(pid=4242, usedGpuMemory=3 * 2**30)] if h == 0 else []
    )
    return m


@pytest.fixture
def fake(monkeypatch):
    calls: list[str] = []
    events: list[tuple[int, int]] = []
    broken: dict = {}
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(calls, events, broken))
    return calls, events, broken


def test_sample_maps_nvml_to_gpu_samples(fake):
    calls, events, _ = fake
    sampler = nvml.Sampler()
    sampler.open()
    doc = sampler.sample()
    assert (
        doc["error"] is None and doc["driver_version"] == "550.90.07" and doc["cuda_driver_version"] == "12.4"
    )
    g0, g1 = (GpuSample.from_dict(g) for g in doc["gpus"])
    assert (g0.name, g0.uuid, g0.util_gpu_pct, g0.util_mem_pct) == ("Fake H100", "GPU-0", 97.0, 40.0)
    assert (g0.fb_used_mib, g0.fb_free_mib, g0.power_w, g0.power_limit_w) == (2048.0, 79872.0, 650.0, 700.0)
    assert (g0.sm_clock_mhz, g0.sm_clock_max_mhz, g0.mem_clock_max_mhz) == (1755, 1980, 2619)
    assert (g0.pcie_gen, g0.pcie_gen_max, g0.pcie_tx_kbps, g0.pcie_rx_kbps) == (4, 5, 1000.0, 1001.0)
    assert (g0.nvlink_tx_kib, g0.nvlink_rx_kib, g0.energy_mj, g0.clock_event_mask) == (
        1024,
        2048,
        123_456,
        0x4,
    )
    assert (g0.ecc_sbe_volatile, g0.ecc_dbe_volatile, g0.ecc_sbe_aggregate, g0.ecc_dbe_aggregate) == (
        0,
        10,
        1,
        11,
    )
    assert g0.processes[0].pid == 4242 and g0.processes[0].used_mib == 3072.0
    assert g0.xid_last == 0  # no event yet: "none since start", as dcgm-exporter reports it
    # GPU 1 lacks these: None, never a zero
    assert (g1.ecc_dbe_volatile, g1.energy_mj, g1.nvlink_tx_kib) == (None, None, None)
    assert g1.processes == []

    # unsupported fields are asked once, not on every scrape
    asked = calls.count("<lambda>")
    events.append((1, 79))
    doc = sampler.sample()
    assert calls.count("<lambda>") - asked == 5  # GPU 0: energy (1) + ECC (4); GPU 1 is not asked again
    assert [g["xid_last"] for g in doc["gpus"]] == [0, 79]
    sampler.close()
    assert calls[-2:] == ["free", "shutdown"]


def test_a_read_failure_publishes_no_gpus(fake):
    _, _, broken = fake
    sampler = nvml.Sampler()
    sampler.open()
    broken["lost"] = True
    doc = sampler.sample()
    assert doc["gpus"] == [] and "GPU is lost" in doc["error"]


def test_no_nvml_is_an_error_value(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    sampler = nvml.Sampler()
    sampler.open()
    doc = sampler.sample()
    assert doc["gpus"] == [] and doc["error"].startswith("NVML init failed")


@pytest.mark.gpu
def test_live_sample_agrees_with_nvidia_smi():
    sampler = nvml.Sampler()
    sampler.open()
    try:
        doc = sampler.sample()
    finally:
        sampler.close()
    assert doc["error"] is None and doc["gpus"]
    out = subprocess.run(
        [shutil.which("nvidia-smi"), "--query-gpu=uuid,memory.total", "--format=csv,noheader,nounits"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    uuids = [line.split(",")[0].strip() for line in out.splitlines()]
    assert [g["uuid"] for g in doc["gpus"]] == uuids
    for g in doc["gpus"]:
        assert 0 <= g["util_gpu_pct"] <= 100 and g["power_w"] > 0 and g["sm_clock_max_mhz"] > 0
