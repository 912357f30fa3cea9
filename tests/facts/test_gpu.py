"""GPU facts from `nvidia-smi -q -x` (real recorded XML), from NVML JSON, and collect_gpus' source choice."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REAL, real_files
from gpuwise.capture.host import CaptureHost
from gpuwise.facts.gpu import (
    Gpu,
    GpuProbe,
    GpuResult,
    attach_warnings,
    collect_gpus,
    parse_nvidia_smi_xml,
    parse_nvml_json,
)
from gpuwise.facts.gpu_fields import (
    CLOCK_EVENT_REASON_BITS,
    XML_REASON_ALIASES,
    bus_id_key,
    reason_from_label,
)

MIB = 1024**2

# file -> (attached_gpus as the header says, [(product name, memory total MiB) per <gpu> block]).
# Read off the files by eye/grep; the parser must agree.
XML_EXPECTED = {
    "datakit_gtx-1050.xml": (1, [("NVIDIA GeForce GTX 1050", 4096)]),
    "datakit_iluvatar-bi-v100_ixsmi.xml": (1, [("Iluvatar BI-V100", 32768)]),
    "datakit_tesla-v100-pcie-32gb.xml": (1, [("Tesla V100-PCIE-32GB", 32510)]),
    "netdata_rtx-2080-win.xml": (1, [("NVIDIA GeForce RTX 2080", 8192)]),
    "netdata_rtx-3060.xml": (1, [("NVIDIA GeForce RTX 3060 Laptop GPU", 6144)]),
    "netdata_rtx-4090-driver-535.xml": (1, [("NVIDIA GeForce RTX 4090", 24564)]),
    "netdata_tesla-p100.xml": (1, [("Tesla P100-PCIE-16GB", 16384)]),
    "telegraf_3090-v13.xml": (1, [("NVIDIA GeForce RTX 3090", 24576)]),
    "telegraf_a100-sxm4-v12.xml": (4, [("NVIDIA A100-SXM4-80GB", 81920)]),
    "telegraf_dual_2070-v13.xml": (2, [("NVIDIA GeForce RTX 2070", 8192)] * 2),
    "telegraf_dual_2080-v13.xml": (2, [("NVIDIA GeForce RTX 2080", 8192)] * 2),
    "telegraf_gt-1030.xml": (1, [("NVIDIA GeForce GT 1030", 1998)]),
    "telegraf_gtx-1070-ti.xml": (None, [("GeForce GTX 1070 Ti", 4096)]),
    "telegraf_gtx-1660-ti.xml": (1, [("Graphics Device", 5912)]),
    "telegraf_quadro-p2000-v12.xml": (1, [("Quadro P2000", 5120)]),
    "telegraf_quadro-p400.xml": (1, [("Quadro P400", 1998)]),
    "telegraf_rtx-3060-v12.xml": (1, [("NVIDIA GeForce RTX 3060", 12288)]),
    "telegraf_rtx-3080-v12.xml": (1, [("NVIDIA GeForce RTX 3080", 10240)]),
    "telegraf_rtx-3080-v13.xml": (1, [("NVIDIA GeForce RTX 3080", 10240)]),
    "telegraf_rtx-3090-v12.xml": (1, [("NVIDIA GeForce RTX 3090", 24576)]),
    "telegraf_rtx-4000-sff-ada-v13.xml": (1, [("NVIDIA RTX 4000 SFF Ada Generation", 20475)]),
    "telegraf_tesla_p4.xml": (1, [("GRID P4-1Q", 1024)]),
}
XML_FILES = real_files("nvidia_smi_xml", "*.xml")


def _xml(real: Path, name: str):
    return parse_nvidia_smi_xml((real / "nvidia_smi_xml" / name).read_text())


@pytest.mark.parametrize("path", XML_FILES, ids=lambda p: p.name)
def test_every_real_xml_parses_count_names_memory(path: Path):
    assert path.name in XML_EXPECTED, f"new fixture {path.name}: add its expected values to XML_EXPECTED"
    attached, blocks = XML_EXPECTED[path.name]
    result = parse_nvidia_smi_xml(path.read_text())
    assert result.probe.source == "nvidia-smi-q-x"
    assert result.probe.attached_gpus == attached
    assert [(g.name, g.memory_total_bytes) for g in result.gpus] == [(n, mib * MIB) for n, mib in blocks]
    assert [g.index for g in result.gpus] == list(range(len(blocks)))
    for gpu in result.gpus:
        # every field is a value or has a reason; nothing silently missing
        for field in (
            "uuid",
            "pci_bus_id",
            "power_limit_watts",
            "ecc_enabled",
            "mig_enabled",
            "sm_clock_mhz",
        ):
            assert getattr(gpu, field) is not None or field in gpu.unknown, (path.name, field)
        assert gpu.compute_capability is None and "compute_capability" in gpu.unknown


def test_expected_table_covers_every_fixture(real):
    assert {p.name for p in XML_FILES} == set(XML_EXPECTED)


def test_a100_mig_trimmed_file(real):
    r = _xml(real, "telegraf_a100-sxm4-v12.xml")
    assert r.driver_version == "535.54.03" and r.cuda_driver_version == "12.2"
    assert r.probe.attached_gpus == 4 and len(r.gpus) == 1
    assert any("reports 4 attached GPUs but lists 1" in n for n in r.probe.notes)
    g = r.gpus[0]
    assert g.mig_enabled is True
    assert g.memory_total_bytes == 81920 * MIB  # the GPU's, not a MIG slice's 19968 MiB
    assert (g.pcie.gen_current, g.pcie.gen_max, g.pcie.width_current, g.pcie.width_max) == (4, 4, 16, 16)
    assert g.power_limit_watts == 500.0 and g.persistence_mode is False
    assert g.ecc_enabled is True and g.ecc_pending_enabled is True
    assert g.ecc_volatile_uncorrectable == 0 and g.ecc_aggregate_uncorrectable == 0
    assert (g.sm_clock_mhz, g.sm_clock_max_mhz, g.temperature_c) == (1275, 1410, 27.0)
    assert g.clock_event_reasons == []
    assert g.uuid == "GPU-513536b6-7d19-9063-b049-1e69664bb298" and g.serial == "1650522003820"
    assert g.retired_pages_sbe is None and "N/A" in g.unknown["retired_pages_sbe"].text
    assert g.remapped_rows_pending is None and "remapped_rows_pending" in g.unknown
    assert g.fabric_state is None and "fabric_state" in g.unknown


def test_v100_old_layout_ecc_and_retired_pages(real):
    g = _xml(real, "datakit_tesla-v100-pcie-32gb.xml").gpus[0]
    # old DTD: single/double-bit counters, <power_readings>, clocks_throttle_reasons
    assert g.ecc_enabled is True and g.ecc_volatile_uncorrectable == 0 and g.ecc_aggregate_uncorrectable == 0
    assert (g.retired_pages_sbe, g.retired_pages_dbe, g.retired_pages_pending) == (0, 0, False)
    assert g.power_limit_watts == 250.0
    assert g.clock_event_reasons == []
    assert g.pci_bus_id == "00000000:21:01.0"


def test_row_remapper_and_v13_power_layout(real):
    g = _xml(real, "telegraf_rtx-4000-sff-ada-v13.xml").gpus[0]
    assert g.remapped_rows_pending is False and g.remapped_rows_failure is False
    assert g.power_limit_watts == 70.0
    g = _xml(real, "telegraf_3090-v13.xml").gpus[0]
    assert g.clock_event_reasons == ["sw_power_cap"]
    assert g.pcie.gen_current == 1 and g.pcie.gen_max == 4  # idle links downshift


def test_ixsmi_session_transcript_extracts_the_xml(real):
    r = _xml(real, "datakit_iluvatar-bi-v100_ixsmi.xml")
    g = r.gpus[0]
    assert r.driver_version == "2.3.0"
    assert g.pcie.gen_current == 3 and g.pcie.gen_max == 4
    assert g.sm_clock_max_mhz == 2500 and g.ecc_enabled is False


def test_minimal_v10_file_marks_missing_fields(real):
    r = _xml(real, "telegraf_gtx-1070-ti.xml")
    assert r.driver_version is None and "attached_gpus" in r.probe.unknown
    g = r.gpus[0]
    assert g.pcie.gen_max is None and "not in this" in g.pcie.unknown["gen_max"].text
    assert g.power_limit_watts is None and "power_limit_watts" in g.unknown


def test_xml_clock_reason_names_match_nvml_bits(real):
    """Both sources name reasons identically: every tag in the real files maps onto NVML's bit names."""
    tags = set()
    for path in XML_FILES:
        tags |= set(re.findall(r"<clocks_(?:event|throttle)_reason_(\w+)>", path.read_text()))
    names = {reason_from_label(t, XML_REASON_ALIASES) for t in tags}
    assert names == set(CLOCK_EVENT_REASON_BITS.values())


@pytest.mark.parametrize(
    "text",
    [
        "",
        "garbage",
        "<nvidia_smi_log><gpu>",
        "<?xml version='1.0'?><nvidia_smi_log></nvidia_smi_log>",
        "\x00\xff<<>>",
    ],
)
def test_bad_xml_gives_empty_result_with_reason(text):
    r = parse_nvidia_smi_xml(text)
    assert r.gpus == [] and (r.probe.notes or r.probe.attached_gpus is None)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(cut=st.integers(min_value=0, max_value=30000), junk=st.text(max_size=40))
def test_truncated_real_xml_never_raises(cut, junk):
    path = REAL / "nvidia_smi_xml" / "telegraf_a100-sxm4-v12.xml"
    if not path.exists():
        pytest.skip("real fixtures absent")
    r = parse_nvidia_smi_xml(path.read_text()[:cut] + junk)
    for g in r.gpus:
        assert g.name is not None or "name" in g.unknown


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=300))
def test_garbage_to_xml_and_nvml_parsers_never_raises(text):
    parse_nvidia_smi_xml(text)
    r = parse_nvml_json(text)
    assert r.gpus == [] or r.probe.source == "nvml"


# ---------------------------------------------------------------- NVML JSON


def _nvml_doc(**over):
    gpu = {
        "index": 0,
        "name": "Test GPU",
        "uuid": "GPU-1",
        "pci_bus_id": "00000000:3B:00.0",
        "memory_total_bytes": 1000,
        "pcie": {"gen_current": 4, "gen_max": 5, "width_current": 16, "width_max": 16},
        "mig_enabled": None,
        "clock_event_reasons": ["gpu_idle"],
        "warnings": [],
        "unknown": {"mig_enabled": "Not Supported", "pcie.gen_max": "ignored: value present"},
    }
    doc = {
        "format": "gpuwise-nvml/1",
        "error": None,
        "driver_version": "550.1",
        "cuda_driver_version": "12.4",
    }
    doc.update(device_count=1, gpus=[gpu], unknown={})
    doc.update(over)
    return doc


def test_nvml_json_maps_fields_and_reasons():
    r = parse_nvml_json(json.dumps(_nvml_doc()))
    assert r.probe.source == "nvml" and r.probe.error is None and r.probe.attached_gpus == 1
    assert (r.driver_version, r.cuda_driver_version) == ("550.1", "12.4")
    g = r.gpus[0]
    assert (g.name, g.memory_total_bytes, g.pcie.gen_max, g.clock_event_reasons) == (
        "Test GPU",
        1000,
        5,
        ["gpu_idle"],
    )
    assert g.mig_enabled is None and g.unknown["mig_enabled"].text == "NVML: Not Supported"
    assert g.serial is None and g.unknown["serial"].text == "not in the NVML output"


def test_nvml_json_broken_gpu_and_wrong_types():
    doc = _nvml_doc()
    doc["gpus"][0]["memory_total_bytes"] = "lots"
    doc["gpus"].append({"index": 1, "error": "NVML could not open GPU 1: GPU is lost"})
    doc["device_count"] = 2
    r = parse_nvml_json(json.dumps(doc))
    good, lost = r.gpus
    assert good.memory_total_bytes is None and "wrong type" in good.unknown["memory_total_bytes"].text
    assert good.name == "Test GPU"
    assert lost.index == 1 and "GPU is lost" in lost.unknown["*"].text and "GPU is lost" in lost.error


def test_nvml_json_error_document():
    r = parse_nvml_json(
        json.dumps(_nvml_doc(error="NVML init failed: Driver Not Loaded", gpus=[], device_count=None))
    )
    assert (
        r.probe.error == "NVML init failed: Driver Not Loaded" and r.probe.source == "none" and r.gpus == []
    )


# ---------------------------------------------------------------- collect_gpus on hand-built captures


def _capture(tmp_path: Path, commands: dict[str, str]) -> CaptureHost:
    d = tmp_path / "cap"
    (d / "commands").mkdir(parents=True)
    meta = {"format": "gpuwise-capture/1", "captured_at": "2026-01-01T00:00:00+00:00", "hostname": "test"}
    (d / "meta.json").write_text(json.dumps(meta))
    for name, text in commands.items():
        (d / "commands" / name).write_text(text)
    return CaptureHost(d)


def test_collect_from_capture_with_xml_copied_at_test_time(real, tmp_path):
    d = tmp_path / "cap"
    (d / "commands").mkdir(parents=True)
    (d / "meta.json").write_text(json.dumps({"format": "gpuwise-capture/1", "hostname": "a100"}))
    shutil.copy(real / "nvidia_smi_xml" / "telegraf_a100-sxm4-v12.xml", d / "commands" / "nvidia-smi-q-x.txt")
    r = collect_gpus(CaptureHost(d))
    assert r.probe.source == "nvidia-smi-q-x" and r.probe.error is None
    assert r.probe.attached_gpus == 4 and [g.name for g in r.gpus] == ["NVIDIA A100-SXM4-80GB"]
    assert r.gpus[0].mig_enabled is True and r.driver_version == "535.54.03"


def test_nvml_preferred_then_xml_when_nvml_failed(real, tmp_path):
    xml = (real / "nvidia_smi_xml" / "datakit_tesla-v100-pcie-32gb.xml").read_text()
    host = _capture(tmp_path / "a", {"nvml.txt": json.dumps(_nvml_doc()), "nvidia-smi-q-x.txt": xml})
    assert collect_gpus(host).probe.source == "nvml"
    failed = json.dumps(_nvml_doc(error="NVML init failed: Driver/library version mismatch", gpus=[]))
    r = collect_gpus(_capture(tmp_path / "b", {"nvml.txt": failed, "nvidia-smi-q-x.txt": xml}))
    assert r.probe.source == "nvidia-smi-q-x" and r.gpus[0].name == "Tesla V100-PCIE-32GB"
    assert r.probe.error == "NVML init failed: Driver/library version mismatch"
    r = collect_gpus(_capture(tmp_path / "c", {"nvml.txt": "not json", "nvidia-smi-q-x.txt": xml}))
    assert r.probe.source == "nvidia-smi-q-x" and "not valid JSON" in r.probe.error


def test_text_report_fallback_and_unmatched_warning_goes_to_notes(real, tmp_path):
    # The 8x A100 report (bus domains 1-4, B-E) with the plain table of an 8x V100 VM whose warning names
    # gpu 0008:00:00.0: no GPU of this report has that bus id, so the warning must land in probe.warnings.
    text = real / "nvidia_smi_text"
    host = _capture(
        tmp_path,
        {
            "nvidia-smi-q.txt": (text / "azhpc-diagnostics_nvidia-smi-q_8x-a100-sxm4-40gb.out").read_text(),
            "nvidia-smi.txt": (
                text / "azhpc-diagnostics_nvidia-smi_8x-v100-sxm2_inforom-warning.out"
            ).read_text(),
        },
    )
    r = collect_gpus(host)
    assert r.probe.source == "nvidia-smi-q" and len(r.gpus) == 8 and r.driver_version == "460.32.03"
    assert all(g.warnings == [] for g in r.gpus)
    assert r.probe.warnings == ["infoROM is corrupted at gpu 0008:00:00.0"] and r.probe.notes == []


def test_infoROM_warning_attached_by_bus_id(real, tmp_path):
    # A GPU listed as 00000008:00:00.0 (the long form of the warning's 0008:00:00.0) gets the warning.
    plain = (
        real / "nvidia_smi_text" / "azhpc-diagnostics_nvidia-smi_8x-v100-sxm2_inforom-warning.out"
    ).read_text()
    result = GpuResult(
        gpus=[Gpu(index=0, pci_bus_id="00000008:00:00.0")], probe=GpuProbe(source="nvidia-smi-q-x")
    )
    attach_warnings(_capture(tmp_path, {"nvidia-smi.txt": plain}), result)
    assert (
        result.gpus[0].warnings == ["infoROM is corrupted at gpu 0008:00:00.0"] and result.probe.notes == []
    )


def test_nvml_source_does_not_read_the_plain_table(tmp_path):
    # NVML validates the infoROM itself; reading nvidia-smi too would make live and replayed probes differ.
    doc = _nvml_doc()
    doc["gpus"][0]["pci_bus_id"] = "00000008:00:00.0"
    plain = "WARNING: infoROM is corrupted at gpu 0008:00:00.0\n"
    r = collect_gpus(_capture(tmp_path, {"nvml.txt": json.dumps(doc), "nvidia-smi.txt": plain}))
    assert r.probe.source == "nvml" and r.gpus[0].warnings == [] and r.probe.notes == []


def test_no_gpu_is_a_normal_result(tmp_path):
    r = collect_gpus(_capture(tmp_path, {}))
    assert r.gpus == [] and r.probe.source == "none" and "no NVIDIA GPU found" in r.probe.notes[0]
    host = _capture(
        tmp_path / "x",
        {
            "nvidia-smi-q-x.txt": "",
            "nvidia-smi-q-x.err": "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
            "nvidia-smi-q-x.rc": "9",
        },
    )
    r = collect_gpus(host)
    assert r.gpus == [] and "exited 9" in r.probe.notes[0] and "couldn't communicate" in r.probe.notes[0]


def test_bus_id_key():
    assert bus_id_key("00000008:00:00.0") == bus_id_key("0008:00:00.0") == (8, 0, 0, 0)
    assert bus_id_key("00000000:3b:00.1") == bus_id_key("0000:3B:00.1")
    assert bus_id_key("nonsense") is None and bus_id_key(None) is None
