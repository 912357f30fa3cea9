"""The capture recorded on a lent NVIDIA H200 VM (benchmarks/gpu_check.sh): NVML and nvidia-smi agree.

A live probe reads NVML; a capture also records `nvidia-smi -q -x`. Both were recorded on the same
machine within a second, so every field that does not move must be equal between the two parsers.
"""

from __future__ import annotations

from pathlib import Path

from gpuwise.capture.host import CaptureHost
from gpuwise.facts.collect import collect_facts
from gpuwise.facts.gpu import parse_nvidia_smi_xml, parse_nvml_json

H200 = Path(__file__).parent.parent / "captures" / "h200-1gpu-kvm-vm"


def test_nvml_and_xml_agree_on_the_recorded_h200():
    host = CaptureHost(H200)
    via_nvml = parse_nvml_json(host.run("nvml").stdout)
    via_xml = parse_nvidia_smi_xml(host.run("nvidia-smi-q-x").stdout)
    assert (via_nvml.driver_version, via_nvml.cuda_driver_version) == (
        via_xml.driver_version,
        via_xml.cuda_driver_version,
    )
    a, b = via_nvml.gpus[0].model_dump(), via_xml.gpus[0].model_dump()
    # compute capability: NVML reports it, `nvidia-smi -q -x` does not; the reasons are worded per source.
    # The capture was recorded before gpuwise read load and power-limit fields through NVML: XML only.
    newer = {"power_limit_default_watts", "power_limit_max_watts", "power_draw_watts", "performance_state"}
    newer |= {"utilization_gpu_percent", "process_count", "vbios_version"}
    assert all(a[k] is None and k in a["unknown"] for k in newer)
    differing = sorted(k for k in a if k not in ("unknown", "compute_capability", *newer) and a[k] != b[k])
    assert differing == []
    assert a["compute_capability"] == "9.0" and b["compute_capability"] is None


def test_h200_facts():
    f = collect_facts(CaptureHost(H200))
    g = f.gpus[0]
    assert f.gpu_probe.source == "nvml" and len(f.gpus) == 1
    assert g.name == "NVIDIA H200" and g.memory_total_bytes == 150754820096
    assert (g.pcie.gen_max, g.pcie.width_max) == (5, 16) and g.power_limit_watts == 700.0
    assert f.software.driver_version == "580.159.04" and f.software.cuda_driver_version == "13.0"
    assert f.platform.environment == "cloud" and f.platform.virtualization == "kvm"
