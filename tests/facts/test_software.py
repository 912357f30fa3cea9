"""Toolchain facts: python-env JSON, nvcc, ldconfig NCCL, container runtimes and toolkit, systemd services."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuwise.capture.environment import collect_python_env
from gpuwise.capture.host import LiveHost
from gpuwise.facts.software import (
    SERVICE_UNITS,
    collect_software,
    parse_container_cli,
    parse_ldconfig_nccl,
    parse_nvcc,
    parse_runtime_version,
    parse_services,
)
from tests.facts.fake_host import FakeHost, failed, json_shaped, missing

# `nvcc --version` and `docker --version` as printed on this machine (2026-11-29).
NVCC = """nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-2025 NVIDIA Corporation
Built on Wed_Aug_20_01:58:59_PM_PDT_2025
Cuda compilation tools, release 13.0, V13.0.88
Build cuda_13.0.r13.0/compiler.36424714_0
"""
DOCKER = "Docker version 28.2.2, build e6534b4\n"

CUDA_BUILD = json.dumps(
    {
        "python_version": "3.10.12",
        "torch": {"__version__": "2.4.0+cu121", "cuda": "12.1", "git_version": "e4ee3be", "hip": None},
        "cudnn": {"version": "9.1.0.70", "distribution": "nvidia-cudnn-cu12"},
        "nccl": {"version": "2.20.5", "distribution": "nvidia-nccl-cu12"},
    }
)


def test_cuda_torch_build():
    sw = collect_software(FakeHost(commands={"python-env": CUDA_BUILD}))
    assert (sw.python_version, sw.torch_version, sw.torch_cuda, sw.torch_cudnn, sw.torch_nccl) == (
        "3.10.12",
        "2.4.0+cu121",
        "12.1",
        "9.1.0.70",
        "2.20.5",
    )


def test_this_python_env_json_round_trip():
    """The real collector's output on this CPU-only machine: torch present, no CUDA, no cuDNN/NCCL wheels."""
    sw = collect_software(FakeHost(commands={"python-env": collect_python_env({})}))
    assert sw.python_version and sw.python_version.count(".") == 2
    assert sw.torch_version and sw.torch_version.startswith("2.")
    if sw.torch_cuda is None:
        assert sw.unknown["torch_cuda"].text in ("torch is a CPU-only build",) or sw.unknown[
            "torch_cuda"
        ].startswith("torch is a ROCm")
    if sw.torch_nccl is None:
        assert "nvidia-nccl-cu12" in sw.unknown["torch_nccl"].text


def test_no_torch_reason_travels():
    env = json.dumps(
        {"python_version": "3.12.1", "torch": None, "torch_reason": "torch is not installed in this Python"}
    )
    sw = collect_software(FakeHost(commands={"python-env": env}))
    assert (
        sw.torch_version is None
        and sw.unknown["torch_version"].text == "torch is not installed in this Python"
    )


def test_nvcc_ldconfig_runtimes_toolkit():
    ldconfig = (
        "812 libs found in cache `/etc/ld.so.cache'\n\tlibnccl.so.2 (libc6,x86-64) "
        "=> /usr/lib/x86_64-linux-gnu/libnccl.so.2\n\tlibnccl.so (libc6,x86-64) "
        "=> /usr/lib/x86_64-linux-gnu/libnccl.so\n"
    )
    host = FakeHost(
        commands={
            "nvcc-version": NVCC,
            "ldconfig-p": ldconfig,
            "docker-version": DOCKER,
            "podman-version": "podman version 4.9.3\n",
            "nvidia-container-cli-version": "cli-version: 1.17.8\nlib-version: 1.17.8\nbuild date: 2025-05-30\n",
        }
    )
    sw = collect_software(host)
    assert sw.nvcc_version == "13.0.88"
    assert sw.nccl_system_version is None
    assert sw.unknown["nccl_system_version"].text == (
        "libnccl.so at /usr/lib/x86_64-linux-gnu/libnccl.so.2; ldconfig names no full version"
    )
    assert sw.container_runtimes == ["docker 28.2.2", "podman 4.9.3"]
    assert sw.nvidia_container_toolkit == "1.17.8"


def test_ldconfig_full_version_in_name():
    text = "\tlibnccl.so.2.21.5 (libc6,x86-64) => /opt/nccl/lib/libnccl.so.2.21.5\n"
    assert parse_ldconfig_nccl(text) == ("2.21.5", "/opt/nccl/lib/libnccl.so.2.21.5")
    assert parse_ldconfig_nccl("\tlibncclx.so (libc6) => /x\n") == (None, None)


def test_services_states_in_unit_order_even_with_rc3():
    out = "active\ninactive\ninactive\nfailed\nunknown\n"
    assert len(SERVICE_UNITS) == 5
    sw = collect_software(
        FakeHost(commands={"systemctl-is-active": failed("systemctl-is-active", 3, stdout=out)})
    )
    assert sw.services == dict(
        zip(SERVICE_UNITS, ["active", "inactive", "inactive", "failed", "unknown"], strict=True)
    )


def test_services_without_systemd():
    err = "System has not been booted with systemd as init system (PID 1). Can't operate."
    sw = collect_software(FakeHost(commands={"systemctl-is-active": failed("systemctl-is-active", 1, err)}))
    assert sw.services == {} and "not been booted with systemd" in sw.unknown["services"].text


@pytest.mark.parametrize(
    ("result", "reason", "kind"),
    [
        (None, "`nvcc-version` not captured", "not_captured"),
        (missing("nvcc"), "nvcc not installed", "tool_missing"),
        (failed("nvcc-version", 126, "Permission denied"), "nvcc exited 126: Permission denied", "failed"),
        ("no version here", "no 'release X.Y' in nvcc --version", "unparsable"),
    ],
)
def test_nvcc_three_cases(result, reason, kind):
    sw = collect_software(FakeHost(commands={"nvcc-version": result} if result else {}))
    assert sw.nvcc_version is None and sw.unknown["nvcc_version"].text == reason
    assert sw.unknown["nvcc_version"].kind == kind  # what code decides on; the text is for people


def test_torch_build_is_data_not_wording():
    def build(torch: dict | None) -> tuple[str | None, str]:
        env = {"python_version": "3.12.3", "torch": torch, "torch_reason": "torch is not installed"}
        sw = collect_software(FakeHost(commands={"python-env": json.dumps(env)}))
        return sw.torch_build, sw.unknown["torch_cuda"].kind if "torch_cuda" in sw.unknown else ""

    assert build({"__version__": "2.5.1+cu124", "cuda": "12.4"}) == ("cuda", "")
    assert build({"__version__": "2.5.1+rocm6.2", "cuda": None, "hip": "6.2"}) == ("rocm", "not_applicable")
    assert build({"__version__": "2.13.0+cpu", "cuda": None}) == ("cpu", "not_applicable")
    assert build(None) == (None, "tool_missing")


def test_driver_fields_left_for_collect():
    sw = collect_software(FakeHost())
    assert sw.driver_version is None and "driver_version" not in sw.unknown


def test_live_machine():
    sw = collect_software(LiveHost())
    assert sw.python_version and sw.torch_version  # torch (CPU build) is installed here
    assert sw.driver_version is None


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=300))
def test_garbage_never_raises(text):
    parse_nvcc(text)
    parse_ldconfig_nccl(text)
    parse_runtime_version(text)
    parse_container_cli(text)
    parse_services(text)
    ids = (
        "python-env",
        "nvcc-version",
        "ldconfig-p",
        "docker-version",
        "podman-version",
        "nvidia-container-cli-version",
        "systemctl-is-active",
    )
    collect_software(FakeHost(commands=dict.fromkeys(ids, text)))


PYTHON_ENV_KEYS = [
    "python_version",
    "torch",
    "__version__",
    "cuda",
    "hip",
    "cudnn",
    "nccl",
    "version",
    "torch_reason",
]


@settings(max_examples=40, deadline=None)
@given(json_shaped(PYTHON_ENV_KEYS))
def test_python_env_json_of_any_shape_never_raises(data):
    collect_software(FakeHost(commands={"python-env": json.dumps(data)}))
