"""Contract: bench's peaks are the catalog's figures for the GPU the driver names, or None with a reason."""

from __future__ import annotations

import pytest

from gpuwise.bench import peaks
from gpuwise.bench.peaks import Peak
from gpuwise.catalog import fabrics, gpus
from gpuwise.documents.bench import BenchReport, Measurement
from tests.conftest import CAPTURES

H100 = "NVIDIA H100 80GB HBM3"  # as torch.cuda.get_device_name and NVML report it


def test_matmul_and_memory_peaks_are_the_catalog_row():
    spec = gpus.get_gpu("H100-SXM")
    mm = peaks.matmul_peak(H100, "bf16")
    assert (mm.value, mm.achievable_fraction) == (spec.bf16_tflops, spec.mamf_fraction)
    assert "H100-SXM" in mm.source.text and "dense bf16" in mm.source.text
    assert (mm.source.kind, mm.source.key, mm.source.source) == ("catalog", "H100-SXM", spec.source)
    hbm = peaks.hbm_peak(H100)
    assert (hbm.value, hbm.achievable_fraction) == (spec.memory_bandwidth_gb_s, spec.memcpy_fraction)


def test_pcie_peak_is_the_fabric_row_for_the_gpus_generation():
    spec = gpus.get_gpu("H100-SXM")
    link = fabrics.pcie_x16(spec.pcie_gen)
    pcie = peaks.pcie_peak(H100)
    assert pcie.value == link.bandwidth_gb_s  # per direction, GB/s: what a one-way copy is compared with
    assert pcie.achievable_fraction == (spec.pcie_fraction or link.achieved_fraction)


def test_nvlink_peak_is_per_direction():
    spec = gpus.get_gpu("H200")
    nv = peaks.nvlink_peak("NVIDIA H200")
    assert nv.value == spec.nvlink_bandwidth_gb_s / 2 and nv.achievable_fraction == spec.nvlink_fraction


@pytest.mark.parametrize(
    ("lookup", "reason"),
    [
        (lambda: peaks.matmul_peak("NVIDIA Quantum Accelerator 9000", "bf16"), "not in the GPU catalog"),
        (lambda: peaks.matmul_peak(None, "bf16"), "no GPU name"),
        (lambda: peaks.nvlink_peak("NVIDIA L4"), "no NVLink listed"),
        (lambda: peaks.hbm_peak("NVIDIA A10G"), "no memory bandwidth listed"),
        (lambda: peaks.pcie_peak("NVIDIA A10G"), "no PCIe generation listed"),
    ],
)
def test_unknown_hardware_gets_no_peak_and_says_why(lookup, reason):
    peak = lookup()
    assert peak.value is None and reason in peak.source.text
    m = Measurement(name="x", layer="compute", unit="TFLOP/s", value=1.0)
    peak.apply(m)
    assert (
        m.peak is None
        and m.achievable_fraction is None
        and reason in m.peak_source.text
        and m.peak_source.kind == "none"
    )


def test_a_peak_given_a_plain_reason_holds_a_structured_source():
    m = Measurement(name="x", layer="collective", value=1.0)
    Peak(None, "2 nodes: the NIC bandwidth is unknown").apply(m)
    assert (m.peak_source.kind, m.peak_source.text) == ("none", "2 nodes: the NIC bandwidth is unknown")
    assert m.model_dump()["peak_source"]["kind"] == "none"


def test_pydantic_serializer_warnings_are_errors_in_the_tests():
    """pyproject.toml's filterwarnings: a str left in a model field fails the test that writes it out."""
    m = Measurement(name="x", layer="l")
    m.peak_source = "a plain string"  # assignment is not validated: only serializing notices
    with pytest.raises(UserWarning, match="Pydantic serializer warnings"):
        m.model_dump()


def test_old_bench_files_with_string_peak_sources_still_load():
    # Bench files from before peak sources were structured hold "catalog: H200, dense bf16" strings.
    report = BenchReport.model_validate_json((CAPTURES / "h200-1gpu-kvm-vm.bench-quick.json").read_text())
    by_name = {m.name: m.peak_source for m in report.results}
    assert (by_name["matmul_bf16"].kind, by_name["matmul_bf16"].key) == ("catalog", "H200")
    assert by_name["matmul_bf16"].text == "catalog: H200, dense bf16"  # shown as before
    assert (by_name["h2d_pinned"].kind, by_name["h2d_pinned"].key) == ("catalog", "H200")
    assert by_name["host_copy"].kind == "none" and by_name["dataloader_samples_per_s"].kind == "none"
    derived = Measurement.model_validate(
        {
            "name": "x",
            "layer": "compute",
            "peak_source": "derived: 4 cores x 3000 MHz x 16 FMA; flag avx2: Intel",
        }
    )
    assert (derived.peak_source.kind, derived.peak_source.key) == ("derived", "avx2")
