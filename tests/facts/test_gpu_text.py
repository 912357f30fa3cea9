"""GPU facts from the text reports: `nvidia-smi -q` / `-a` (real recorded files) and plain `nvidia-smi` warnings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REAL, real_files
from gpuwise.facts.gpu import parse_nvidia_smi_q_text, parse_nvidia_smi_warnings
from gpuwise.facts.gpu_fields import CLOCK_EVENT_REASON_BITS, TEXT_REASON_LABELS, reason_from_label

MIB = 1024**2

# file -> (Attached GPUs, product name of every GPU block or None, FB memory total MiB or None)
TEXT_EXPECTED = {
    "thamada-gls_A10_nvidia-smi-a.txt": (1, "NVIDIA A10", 23028),
    "thamada-gls_GH200_nvidia-smi-a.txt": (1, "NVIDIA GH200 480GB", 97871),
    "thamada-gls_H200_nvidia-smi-a.txt": (1, "NVIDIA H200", 143771),
    "thamada-gls_RTX5090_nvidia-smi-a.txt": (1, "NVIDIA GeForce RTX 5090", 32607),
    "thamada-gls_RTX_A6000_x9_nvidia-smi-a.txt": (9, "NVIDIA RTX A6000", 46068),
    "thamada-gls_V100_x8_nvidia-smi-a.txt": (8, "Tesla V100-SXM2-16GB", 16384),
    "thamada_A100SXMx4_nvidia-smi-a.txt": (4, "NVIDIA A100-SXM4-80GB", 81920),
    "thamada_A40x10_nvidia-smi-a.txt": (10, "NVIDIA A40", 46068),
    "thamada_H100NVLx2_nvidia-smi-a.txt": (2, "NVIDIA H100 NVL", 95830),
    "thamada_L40S_nvidia-smi-a.txt": (1, "NVIDIA L40S", 46068),
    "thamada_L4_nvidia-smi-a.txt": (1, "NVIDIA L4", 23034),
    "thamada_RTX2000Ada_nvidia-smi-a.txt": (1, "NVIDIA RTX 2000 Ada Generation", 16380),
    "thamada_RTX3090_nvidia-smi-a.txt": (2, "NVIDIA GeForce RTX 3090", 24576),
    "thamada_RTX4000Ada_nvidia-smi-a.txt": (1, "NVIDIA RTX 4000 Ada Generation", 20475),
    "thamada_RTX4060Ti_nvidia-smi-a.txt": (2, "NVIDIA GeForce RTX 4060 Ti", 16380),
    "thamada_RTX4090_nvidia-smi-a.txt": (8, "NVIDIA GeForce RTX 4090", 24564),
    "thamada_RTX6000Ada_x8_nvidia-smi-a.txt": (8, "NVIDIA RTX 6000 Ada Generation", 49140),
    "azhpc-diagnostics_nvidia-smi-q_8x-a100-sxm4-40gb.out": (8, "A100-SXM4-40GB", 40536),
    "azurehpc-health-checks_nvidia-smi-q-d-PAGE_RETIREMENT_8gpu.txt": (8, None, None),
}
TEXT_FILES = sorted(
    {*real_files("nvidia_smi_text", "*-a.txt"), *real_files("nvidia_smi_text", "*nvidia-smi-q*.out")}
    | set(real_files("nvidia_smi_text", "*PAGE_RETIREMENT*"))
)
# plain `nvidia-smi` tables; the one with the infoROM warning is tested on its own
PLAIN_FILES = [
    p
    for p in real_files("nvidia_smi_text", "*nvidia-smi*")
    if p not in TEXT_FILES and "inforom" not in p.name
]


def _report(real: Path, name: str):
    return parse_nvidia_smi_q_text((real / "nvidia_smi_text" / name).read_text())


@pytest.mark.parametrize("path", TEXT_FILES, ids=lambda p: p.name)
def test_every_real_q_report_parses(path: Path):
    assert path.name in TEXT_EXPECTED, f"new fixture {path.name}: add it to TEXT_EXPECTED"
    attached, name, mib = TEXT_EXPECTED[path.name]
    r = parse_nvidia_smi_q_text(path.read_text())
    assert r.probe.source == "nvidia-smi-q" and r.probe.attached_gpus == attached and len(r.gpus) == attached
    assert r.probe.notes == []
    for i, g in enumerate(r.gpus):
        assert g.index == i and g.pci_bus_id
        assert g.name == name and g.memory_total_bytes == (mib * MIB if mib else None)
        if name is None:
            assert "not in this nvidia-smi -q output" in g.unknown["name"].text


def test_expected_table_covers_every_fixture(real):
    assert {p.name for p in TEXT_FILES} == set(TEXT_EXPECTED)


def test_azure_a100_report_values(real):
    r = _report(real, "azhpc-diagnostics_nvidia-smi-q_8x-a100-sxm4-40gb.out")
    assert (r.driver_version, r.cuda_driver_version) == ("460.32.03", "11.2")
    g = r.gpus[0]
    assert g.persistence_mode is False  # persistence off on every GPU of this VM
    assert all(x.persistence_mode is False for x in r.gpus)
    assert g.pci_bus_id == "00000001:00:00.0" and g.uuid == "GPU-b01e9f90-c60c-4ad1-2052-154833662357"
    assert g.power_limit_watts == 400.0 and g.mig_enabled is False and g.ecc_enabled is True
    assert (
        g.ecc_volatile_uncorrectable == 0
        and g.remapped_rows_pending is False
        and g.remapped_rows_failure is False
    )
    assert g.clock_event_reasons == ["gpu_idle"]  # "Clocks Throttle Reasons" layout of R460
    assert (g.sm_clock_mhz, g.sm_clock_max_mhz, g.temperature_c) == (210, 1410, 41.0)


def test_pending_row_remap_and_aggregate_dbe_are_read(real):
    a100 = _report(real, "thamada_A100SXMx4_nvidia-smi-a.txt").gpus
    assert [g.remapped_rows_pending for g in a100] == [False, True, False, False]
    gh200 = _report(real, "thamada-gls_GH200_nvidia-smi-a.txt").gpus[0]
    assert (
        gh200.ecc_volatile_uncorrectable == 0 and gh200.ecc_aggregate_uncorrectable == 1
    )  # DRAM Uncorrectable : 1
    assert gh200.pcie.width_max == 1  # C2C-attached GH200 shows an x1 PCIe link


def test_h200_fabric_and_old_v100_ecc_layout(real):
    h200 = _report(real, "thamada-gls_H200_nvidia-smi-a.txt").gpus[0]
    assert h200.fabric_state == "Completed" and h200.power_limit_watts == 700.0
    assert (h200.pcie.gen_current, h200.pcie.gen_max) == (5, 5)
    v100 = _report(real, "thamada-gls_V100_x8_nvidia-smi-a.txt").gpus[0]
    assert v100.ecc_volatile_uncorrectable == 0 and (v100.retired_pages_sbe, v100.retired_pages_dbe) == (0, 0)
    assert v100.retired_pages_pending is False
    assert v100.remapped_rows_pending is None and "N/A" in v100.unknown["remapped_rows_pending"].text


def test_page_retirement_only_report(real):
    r = _report(real, "azurehpc-health-checks_nvidia-smi-q-d-PAGE_RETIREMENT_8gpu.txt")
    assert [g.pci_bus_id for g in r.gpus][:2] == ["00000001:00:00.0", "00000002:00:00.0"]
    assert all(
        (g.retired_pages_sbe, g.retired_pages_dbe, g.retired_pages_pending) == (0, 0, False) for g in r.gpus
    )
    assert r.gpus[0].power_limit_watts is None and "power_limit_watts" in r.gpus[0].unknown


def test_text_clock_reason_labels_match_nvml_bits(real):
    labels = set()
    for path in TEXT_FILES:
        for block in re.findall(r"Clocks (?:Event|Throttle) Reasons\n((?:\s{8,}.*\n)+)", path.read_text()):
            labels |= {line.split(":")[0].strip().lower() for line in block.splitlines()}
    assert {reason_from_label(x, TEXT_REASON_LABELS) for x in labels} == set(CLOCK_EVENT_REASON_BITS.values())


def capture_sections(pattern: str):
    """(capture file, body) for each section of the multi-command nvidia_gpu_exporter captures."""
    out = []
    for path in real_files("nvidia_smi_captures", "*.txt"):
        for m in re.finditer(pattern + r"\n#{20,}\n(.*?)(?=\n#{20,}|\Z)", path.read_text(), re.S):
            out.append(pytest.param(path.name, m.group(1), id=path.name))
    return out


@pytest.mark.parametrize("name,body", capture_sections(r"# idle :: query \(-q\)\n# \$ nvidia-smi -q"))
def test_recent_driver_q_reports_from_captures(name, body):
    r = parse_nvidia_smi_q_text(body)
    assert r.probe.attached_gpus == len(r.gpus) == 1
    g = r.gpus[0]
    assert g.name and g.memory_total_bytes and g.power_limit_watts
    if "mig" in name:
        assert g.mig_enabled is True
    else:
        assert g.mig_enabled is not True and (g.mig_enabled is False or "mig_enabled" in g.unknown)


# ---------------------------------------------------------------- plain nvidia-smi


def test_inforom_warning_from_plain_output(real):
    r = parse_nvidia_smi_warnings(
        (
            real / "nvidia_smi_text" / "azhpc-diagnostics_nvidia-smi_8x-v100-sxm2_inforom-warning.out"
        ).read_text()
    )
    assert [(g.index, g.pci_bus_id, g.warnings) for g in r.gpus] == [
        (7, "0008:00:00.0", ["infoROM is corrupted at gpu 0008:00:00.0"])
    ]


@pytest.mark.parametrize("path", PLAIN_FILES, ids=lambda p: p.name)
def test_plain_tables_without_warnings_give_none(path: Path):
    r = parse_nvidia_smi_warnings(path.read_text())
    assert r.gpus == [] and r.probe.notes == []


def test_lost_gpu_and_unattributed_warnings():
    text = (
        "Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost. "
        " Reboot the system to recover this GPU\nWARNING: something without a bus id\n"
    )
    r = parse_nvidia_smi_warnings(text)
    assert r.gpus[0].pci_bus_id == "0000:3B:00.0" and "GPU is lost" in r.gpus[0].warnings[0]
    assert r.gpus[0].index is None and "index" in r.gpus[0].unknown
    assert r.probe.warnings == ["something without a bus id"]


@settings(max_examples=60, deadline=None)
@given(cut=st.integers(min_value=0, max_value=20000), junk=st.text(max_size=40))
def test_truncated_real_report_never_raises(cut, junk):
    path = REAL / "nvidia_smi_text" / "thamada_A100SXMx4_nvidia-smi-a.txt"
    if not path.exists():
        pytest.skip("real fixtures absent")
    r = parse_nvidia_smi_q_text(path.read_text()[:cut] + junk)
    for g in r.gpus:
        for field in ("name", "memory_total_bytes", "ecc_enabled", "sm_clock_max_mhz"):
            assert getattr(g, field) is not None or field in g.unknown


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=400))
def test_garbage_text_never_raises(text):
    parse_nvidia_smi_q_text(text)
    parse_nvidia_smi_warnings(text)
