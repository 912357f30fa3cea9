"""The keys of `gpuwise probe --json` that scripts rely on (issue 2) exist, with the promised types."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuwise.capture.host import CaptureHost
from gpuwise.facts.collect import collect_facts

CAPTURES = Path(__file__).parent.parent / "captures"

TOP = [
    "software.driver_version",
    "software.cuda_driver_version",
    "cpu.model",
    "cpu.sockets",
    "cpu.cores",
    "cpu.threads",
    "cpu.numa_nodes",
    "memory.total_bytes",
    "topology.gpu_links",
    "kernel.release",
    "kernel.thp_enabled",
    "storage.shm_bytes",
    "platform.virtualization",
    "platform.cloud_provider",
    "platform.environment",
]
PER_GPU = [
    "name",
    "memory_total_bytes",
    "pcie.gen_current",
    "pcie.width_current",
    "pcie.gen_max",
    "pcie.width_max",
]
PER_PORT = ["state", "rate_gbps", "link_layer"]


def lookup(data: dict, dotted: str):
    for part in dotted.split("."):
        assert part in data, f"missing key {dotted}"
        data = data[part]
    return data


@pytest.mark.parametrize("capture", ["cpu-vm-kvm-docker", "h200-1gpu-kvm-vm"])
def test_script_keys(capture):
    data = collect_facts(CaptureHost(CAPTURES / capture)).to_json_dict()
    assert data["schema"] == "gpuwise-facts/1"
    for key in TOP:
        lookup(data, key)
    for gpu in data["gpus"]:
        for key in PER_GPU:
            lookup(gpu, key)
    for dev in data["network"]["rdma_devices"]:
        for port in dev["ports"]:
            for key in PER_PORT:
                assert key in port
    # counts are plain integers: cores are physical cores, threads logical CPUs
    assert isinstance(data["cpu"]["cores"], int) and isinstance(data["cpu"]["threads"], int)
    assert data["platform"]["environment"] in ("cloud", "onprem", "unknown")


def test_h200_values():
    data = collect_facts(CaptureHost(CAPTURES / "h200-1gpu-kvm-vm")).to_json_dict()
    assert data["gpus"][0]["pcie"]["gen_max"] == 5 and data["gpus"][0]["pcie"]["width_max"] == 16
    assert data["cpu"]["threads"] == 16 and data["software"]["driver_version"] == "580.159.04"
    assert data["topology"]["gpu_links"] == [["X"]]
