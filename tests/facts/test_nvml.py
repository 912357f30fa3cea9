"""The NVML boundary (capture/nvml.py).

On this GPU-less machine NVML cannot initialise, which is itself a case to test. The mapping
from NVML calls to the gpuwise-nvml/1 document is tested with a fake `pynvml` module put in
sys.modules: it checks our unit conversions and error handling, not any GPU's numbers.
The `gpu`-marked test compares NVML with `nvidia-smi -q -x` on a real GPU.
"""

from __future__ import annotations

import ctypes
import json
import shutil
import subprocess
import sys
import types

import pytest

from gpuwise.capture import nvml
from gpuwise.facts.gpu import parse_nvidia_smi_xml, parse_nvml_json


def test_collect_json_without_a_gpu_records_the_init_error():
    if shutil.which("nvidia-smi"):
        pytest.skip("this machine has an NVIDIA driver")
    doc = json.loads(nvml.collect_json({}))
    assert doc["format"] == "gpuwise-nvml/1" and doc["gpus"] == []
    assert doc["error"].startswith("NVML init failed: ")
    r = parse_nvml_json(json.dumps(doc))
    assert r.gpus == [] and r.probe.error == doc["error"] and r.probe.source == "none"


def test_missing_bindings_are_an_error_not_an_exception(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # makes `import pynvml` raise ImportError
    doc = json.loads(nvml.collect_json({}))
    assert "nvidia-ml-py is not installed" in doc["error"] and "To fix" in doc["error"]


class NVMLError(Exception):
    def __init__(self, value: int, text: str):
        super().__init__(text)
        self.value = value


class FabricInfo(ctypes.Structure):
    _fields_ = [("state", ctypes.c_uint8)]


def _fake_pynvml(calls: list[str], *, init_error: str | None = None, lost: set[int] = frozenset()):
    """A stand-in for pynvml with two GPUs: GPU 0 answers everything, GPU 1 lacks ECC/remap/fabric support."""
    m = types.ModuleType("pynvml")
    not_supported = NVMLError(3, "Not Supported")
    m.NVMLError = NVMLError
    m.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, m.NVML_VOLATILE_ECC, m.NVML_AGGREGATE_ECC = 1, 0, 1
    (
        m.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS,
        m.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR,
    ) = 0, 1
    m.NVML_CLOCK_SM, m.NVML_TEMPERATURE_GPU, m.NVML_ERROR_CORRUPTED_INFOROM = 1, 0, 14
    m.c_nvmlGpuFabricInfo_t = FabricInfo

    def init():
        calls.append("init")
        if init_error:
            raise NVMLError(12, init_error)

    def supported_on_0(value):
        def getter(h, *args):
            if h != 0:
                raise not_supported
            return value(*args) if callable(value) else value

        return getter

    def handle(i):
        if i in lost:
            raise NVMLError(15, "GPU is lost")
        return i

    def fabric(h, ref):
        if h != 0:
            raise not_supported
        ref._obj.state = 3

    def validate_inforom(h):
        if h == 0:
            raise NVMLError(14, "Corrupted infoROM")

    m.nvmlInit = init
    m.nvmlShutdown = lambda: calls.append("shutdown")
    m.nvmlSystemGetDriverVersion = lambda: b"550.90.07"
    m.nvmlSystemGetCudaDriverVersion = lambda: 12040
    m.nvmlDeviceGetCount = lambda: 2
    m.nvmlDeviceGetHandleByIndex = handle
    m.nvmlDeviceGetName = lambda h: f"Fake GPU {h}"
    m.nvmlDeviceGetUUID = lambda h: f"GPU-{h}"
    m.nvmlDeviceGetSerial = lambda h: "123"
    m.nvmlDeviceGetVbiosVersion = lambda h: "96.00.89.00.01"
    m.nvmlDeviceGetPciInfo = lambda h: types.SimpleNamespace(busId=f"00000000:0{h}:00.0".encode())
    m.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(total=80 * 1024**3)
    m.nvmlDeviceGetCudaComputeCapability = lambda h: (9, 0)
    m.nvmlDeviceGetCurrPcieLinkGeneration = lambda h: 1
    m.nvmlDeviceGetMaxPcieLinkGeneration = lambda h: 5
    m.nvmlDeviceGetCurrPcieLinkWidth = lambda h: 16
    m.nvmlDeviceGetMaxPcieLinkWidth = lambda h: 16
    m.nvmlDeviceGetEnforcedPowerLimit = lambda h: 700000  # milliwatts
    m.nvmlDeviceGetPowerManagementDefaultLimit = lambda h: 700000
    m.nvmlDeviceGetPowerManagementLimitConstraints = lambda h: (200000, 700000)
    m.nvmlDeviceGetPowerUsage = lambda h: 88500
    m.nvmlDeviceGetPerformanceState = lambda h: 8
    m.nvmlDeviceGetUtilizationRates = lambda h: types.SimpleNamespace(gpu=0, memory=0)
    m.nvmlDeviceGetComputeRunningProcesses = lambda h: []
    m.nvmlDeviceGetPersistenceMode = lambda h: 1
    m.nvmlDeviceGetEccMode = supported_on_0([1, 0])
    m.nvmlDeviceGetTotalEccErrors = supported_on_0(lambda kind, scope: 2 if scope == 1 else 0)
    m.nvmlDeviceGetRetiredPages = supported_on_0(lambda cause: [0x10, 0x20] if cause == 1 else [])
    m.nvmlDeviceGetRetiredPagesPendingStatus = supported_on_0(0)
    m.nvmlDeviceGetRemappedRows = supported_on_0((3, 1, 1, 0))
    m.nvmlDeviceGetMigMode = lambda h: [0, 0]
    m.nvmlDeviceGetClockInfo = lambda h, clock: 345
    m.nvmlDeviceGetMaxClockInfo = lambda h, clock: 1980
    m.nvmlDeviceGetTemperature = lambda h, sensor: 31
    m.nvmlDeviceGetCurrentClocksEventReasons = lambda h: 0x1 | 0x20 | 0x1000
    m.nvmlDeviceGetGpuFabricInfo = fabric
    m.nvmlDeviceValidateInforom = validate_inforom
    return m


def test_mapping_with_a_fake_pynvml(monkeypatch):
    calls: list[str] = []
    monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml(calls))
    doc = json.loads(nvml.collect_json({}))
    assert calls == ["init", "shutdown"]
    assert (
        doc["error"] is None and doc["driver_version"] == "550.90.07" and doc["cuda_driver_version"] == "12.4"
    )
    g0, g1 = doc["gpus"]
    assert g0["power_limit_watts"] == 700.0 and g0["pci_bus_id"] == "00000000:00:00.0"
    assert (g0["power_limit_default_watts"], g0["power_limit_max_watts"], g0["power_draw_watts"]) == (
        700,
        700,
        88.5,
    )
    assert (g0["performance_state"], g0["utilization_gpu_percent"], g0["process_count"]) == ("P8", 0.0, 0)
    assert g0["pcie"] == {"gen_current": 1, "gen_max": 5, "width_current": 16, "width_max": 16}
    assert g0["clock_event_reasons_mask"] == 0x1 | 0x20 | 0x1000  # stored raw; facts decode it
    assert (g0["ecc_enabled"], g0["ecc_pending_enabled"]) == (True, False)
    assert (g0["ecc_volatile_uncorrectable"], g0["ecc_aggregate_uncorrectable"]) == (0, 2)
    assert (g0["retired_pages_sbe"], g0["retired_pages_dbe"], g0["retired_pages_pending"]) == (0, 2, False)
    assert (g0["remapped_rows_pending"], g0["remapped_rows_failure"]) == (True, False)
    assert g0["fabric_state"] == "Completed" and g0["compute_capability"] == "9.0"
    assert g0["warnings"] == ["infoROM is corrupted"] and g0["unknown"] == {}
    # GPU 1: unsupported fields are null with NVML's reason
    assert g1["ecc_enabled"] is None and g1["unknown"]["ecc_enabled"] == "Not Supported"
    assert g1["fabric_state"] is None and "fabric_state" in g1["unknown"]

    r = parse_nvml_json(json.dumps(doc))
    assert r.probe.source == "nvml" and r.probe.attached_gpus == 2
    a, b = r.gpus
    assert a.memory_total_bytes == 80 * 1024**3 and a.mig_enabled is False and a.persistence_mode is True
    assert a.temperature_c == 31.0 and (a.sm_clock_mhz, a.sm_clock_max_mhz) == (345, 1980)
    assert a.clock_event_reasons == ["gpu_idle", "sw_thermal_slowdown", "reason_0x1000"]
    assert b.ecc_enabled is None and b.unknown["ecc_enabled"].text == "NVML: Not Supported"


def test_lost_gpu_becomes_an_entry_and_shutdown_still_runs(monkeypatch):
    calls: list[str] = []
    monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml(calls, lost={0}))
    doc = nvml.collect()
    assert calls == ["init", "shutdown"]
    assert doc["gpus"][0] == {"index": 0, "error": "NVML could not open GPU 0: GPU is lost"}
    assert doc["gpus"][1]["name"] == "Fake GPU 1"
    lost = parse_nvml_json(json.dumps(doc)).gpus[0]
    assert lost.index == 0 and "GPU is lost" in lost.unknown["*"].text


def test_init_failure_is_recorded(monkeypatch):
    calls: list[str] = []
    monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml(calls, init_error="Driver Not Loaded"))
    doc = nvml.collect()
    assert doc["error"] == "NVML init failed: Driver Not Loaded" and doc["gpus"] == [] and calls == ["init"]


def test_unexpected_exception_mid_read_keeps_what_was_read(monkeypatch):
    calls: list[str] = []
    fake = _fake_pynvml(calls)
    fake.nvmlDeviceGetCount = lambda: (_ for _ in ()).throw(RuntimeError("driver went away"))
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    doc = nvml.collect()
    assert (
        doc["driver_version"] == "550.90.07" and "could not count" in doc["error"] and calls[-1] == "shutdown"
    )


def test_older_bindings_use_the_throttle_name(monkeypatch):
    calls: list[str] = []
    fake = _fake_pynvml(calls)
    del fake.nvmlDeviceGetCurrentClocksEventReasons
    fake.nvmlDeviceGetCurrentClocksThrottleReasons = lambda h: 0x4
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    doc = nvml.collect()
    assert doc["gpus"][0]["clock_event_reasons_mask"] == 0x4
    assert parse_nvml_json(json.dumps(doc)).gpus[0].clock_event_reasons == ["sw_power_cap"]


@pytest.mark.gpu
def test_nvml_and_nvidia_smi_xml_agree_on_a_real_gpu():
    """On a GPU machine: both sources give the same facts for the fields that do not move."""
    doc = nvml.collect_json({})
    via_nvml = parse_nvml_json(doc)
    assert via_nvml.probe.error is None, via_nvml.probe.error
    xml = subprocess.run(
        ["nvidia-smi", "-q", "-x"], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    via_xml = parse_nvidia_smi_xml(xml)
    assert len(via_nvml.gpus) == len(via_xml.gpus) > 0
    assert via_nvml.driver_version == via_xml.driver_version
    for a, b in zip(via_nvml.gpus, via_xml.gpus, strict=True):
        assert (a.name, a.uuid) == (b.name, b.uuid)
        assert a.pci_bus_id.lower() == b.pci_bus_id.lower()
        assert abs(a.memory_total_bytes - b.memory_total_bytes) <= 1024**2, (
            a.memory_total_bytes,
            b.memory_total_bytes,
        )
        assert (a.pcie.gen_max, a.pcie.width_max) == (b.pcie.gen_max, b.pcie.width_max)
        assert a.power_limit_watts == pytest.approx(b.power_limit_watts, abs=0.5)
        assert (a.ecc_enabled, a.mig_enabled, a.persistence_mode) == (
            b.ecc_enabled,
            b.mig_enabled,
            b.persistence_mode,
        )
        assert a.sm_clock_max_mhz == b.sm_clock_max_mhz


def _one_gpu_doc(**gpu) -> str:
    entry = {"index": 0, "name": "Fake GPU", "unknown": {}, "warnings": [], "pcie": {}, **gpu}
    return json.dumps({"format": "gpuwise-nvml/1", "error": None, "device_count": 1, "gpus": [entry]})


def test_facts_decode_the_raw_mask_and_still_read_the_names_list_of_older_captures():
    assert parse_nvml_json(_one_gpu_doc(clock_event_reasons_mask=0x8 | 0x40)).gpus[0].clock_event_reasons == [
        "hw_slowdown",
        "hw_thermal_slowdown",
    ]
    # tests/captures/h200-1gpu-kvm-vm was recorded before the mask was stored: it has the decoded names
    old = parse_nvml_json(_one_gpu_doc(clock_event_reasons=["gpu_idle"])).gpus[0]
    assert old.clock_event_reasons == ["gpu_idle"]


def test_an_unsupported_or_garbled_mask_is_unknown_with_a_reason():
    unsupported = _one_gpu_doc(
        clock_event_reasons_mask=None, unknown={"clock_event_reasons_mask": "Not Supported"}
    )
    g = parse_nvml_json(unsupported).gpus[0]
    assert g.clock_event_reasons is None and g.unknown["clock_event_reasons"].text == "NVML: Not Supported"
    assert g.unknown["clock_event_reasons"].kind == "not_applicable"
    g = parse_nvml_json(_one_gpu_doc(clock_event_reasons_mask="0x4")).gpus[0]
    assert g.clock_event_reasons is None and "not a bit mask" in g.unknown["clock_event_reasons"].text
    assert g.unknown["clock_event_reasons"].kind == "unparsable"
