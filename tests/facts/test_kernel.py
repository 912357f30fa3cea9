"""Kernel/OS facts: cmdline (real GRUB line), IOMMU mode, THP, sysctls, memlock, ACS from real lspci -vvv."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuwise.capture.host import LiveHost
from gpuwise.facts.kernel import (
    acs_redirect_bridges,
    bracketed_choice,
    collect_kernel,
    iommu_mode,
    parse_cmdline,
    parse_memlock,
)
from tests.facts.explained import assert_every_none_is_explained
from tests.facts.fake_host import FakeHost, failed, md_blocks, missing

# This machine's /proc/self/limits, first lines (2026-11-29).
LIMITS = """Limit                     Soft Limit           Hard Limit           Units
Max stack size            8388608              unlimited            bytes
Max locked memory         8388608              8388608              bytes
"""


def _grub_cmdline(real) -> str:
    text = (real / "server_reports/stelline_asus-esc8000a-e12.md").read_text()
    return re.search(r'^GRUB_CMDLINE_LINUX_DEFAULT="([^"]*)"', text, re.MULTILINE).group(1)


def test_real_grub_command_line(real):
    cmdline = "BOOT_IMAGE=/vmlinuz-6.8.0 root=UUID=x ro " + _grub_cmdline(real)
    k = collect_kernel(FakeHost(files={"/proc/cmdline": cmdline + "\n"}))
    assert k.iommu == "off"  # amd_iommu=off wins over iommu=pt: the AMD IOMMU is not there to pass through
    assert k.isolcpus == "0-3,32-35" and k.nohz_full == "0-3,32-35"
    assert k.cmdline == cmdline


@pytest.mark.parametrize(
    ("cmdline", "mode"),
    [
        ("ro quiet", "default"),
        ("intel_iommu=on iommu=pt", "pt"),
        ("amd_iommu=on", "on"),
        ("intel_iommu=on,sm_on", "on"),
        ("iommu=off", "off"),
        ("quiet -- iommu=pt", "default"),  # after "--" the words belong to init
    ],
)
def test_iommu_mode(cmdline, mode):
    assert iommu_mode(parse_cmdline(cmdline)) == mode


def test_thp_sysctls_memlock_modules():
    files = {
        "/proc/version": "Linux version 6.8.0-49-generic (buildd@lcy02) (gcc 13.2.0) #49-Ubuntu SMP\n",
        "/etc/os-release": 'NAME="Ubuntu"\nPRETTY_NAME="Ubuntu 24.04.1 LTS"\n',
        "/sys/kernel/mm/transparent_hugepage/enabled": "always [madvise] never\n",
        "/sys/kernel/mm/transparent_hugepage/defrag": "always defer defer+madvise [madvise] never\n",
        "/proc/sys/net/ipv4/tcp_rmem": "4096\t131072\t33554432\n",
        "/proc/sys/vm/swappiness": "60\n",
        "/proc/self/limits": LIMITS,
        "/proc/modules": "nvidia_peermem 16384 0 - Live 0x0\nib_core 479232 8 nvidia_peermem, Live 0x0\n",
    }
    k = collect_kernel(FakeHost(files=files))
    assert (k.release, k.distro) == ("6.8.0-49-generic", "Ubuntu 24.04.1 LTS")
    assert (k.thp_enabled, k.thp_defrag) == ("madvise", "madvise")
    assert k.sysctl == {"net.ipv4.tcp_rmem": "4096 131072 33554432", "vm.swappiness": "60"}
    assert k.unknown["sysctl.vm.dirty_ratio"].text.startswith("/proc/sys/vm/dirty_ratio not found")
    assert (k.memlock_unlimited, k.memlock_bytes) == (False, 8388608)
    assert k.modules == ["ib_core", "nvidia_peermem"]


def test_memlock_unlimited():
    assert parse_memlock("Max locked memory         unlimited            unlimited            bytes\n") == (
        "unlimited",
        None,
    )
    k = collect_kernel(
        FakeHost(files={"/proc/self/limits": "Max locked memory  unlimited  unlimited  bytes\n"})
    )
    assert (
        k.memlock_unlimited is True
        and k.memlock_bytes is None
        and "unlimited" in k.unknown["memlock_bytes"].text
    )


def _lspci_blocks(real) -> str:
    out = []
    for report in ("stelline_asus-esc8000a-e12.md", "stelline_puget-threadripper-pro-wrx90.md"):
        out += md_blocks((real / "server_reports" / report).read_text(), "lspci -vvv -s")
    return "\n".join(out)


def test_acs_real_lspci_none_redirected(real):
    text = _lspci_blocks(real)
    assert text.count("ACSCtl:") >= 2  # the ConnectX-7 functions carry an ACS capability
    k = collect_kernel(FakeHost(commands={"lspci-vvv": text}))
    assert k.acs_redirect_bridges == []


def test_acs_redirect_found_on_the_device_that_has_it(real):
    text = _lspci_blocks(real)
    start = text.index("21:00.0 Ethernet controller")
    end = text.index("ACSCtl:", start)
    end = text.index("\n", end)
    flipped = text[:start] + text[start:end].replace("ReqRedir-", "ReqRedir+") + text[end:]
    assert acs_redirect_bridges(flipped) == ["21:00.0"]


def test_acs_three_cases():
    assert "lspci-vvv" in collect_kernel(FakeHost()).unknown["acs_redirect_bridges"].text
    missing_reason = collect_kernel(FakeHost(commands={"lspci-vvv": missing("lspci")})).unknown[
        "acs_redirect_bridges"
    ]
    assert missing_reason.text == "lspci not installed" and missing_reason.kind == "tool_missing"
    k = collect_kernel(
        FakeHost(commands={"lspci-vvv": failed("lspci-vvv", 1, "pcilib: Cannot open /proc/bus/pci")})
    )
    assert k.acs_redirect_bridges is None and k.unknown["acs_redirect_bridges"].text.startswith(
        "lspci exited 1: pcilib"
    )
    denied = "00:01.0 PCI bridge: Intel Corporation Device\n\tCapabilities: <access denied>\n"
    k = collect_kernel(FakeHost(commands={"lspci-vvv": denied}))
    assert k.acs_redirect_bridges is None and "without root" in k.unknown["acs_redirect_bridges"].text


def test_bracketed_choice():
    assert bracketed_choice("[always] madvise never") == "always"
    assert bracketed_choice("always madvise never") is None


def test_live_machine():
    k = collect_kernel(LiveHost())
    assert k.release and re.match(r"^\d+\.\d+", k.release)
    assert k.distro and k.cmdline and k.iommu in ("pt", "on", "off", "default")
    assert k.thp_enabled in ("always", "madvise", "never")
    assert k.memlock_unlimited is not None


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=300))
def test_garbage_never_raises(text):
    parse_cmdline(text)
    iommu_mode(parse_cmdline(text))
    bracketed_choice(text)
    parse_memlock(text)
    acs_redirect_bridges(text)
    files = {
        p: text
        for p in ("/proc/version", "/etc/os-release", "/proc/cmdline", "/proc/self/limits", "/proc/modules")
    }
    assert_every_none_is_explained(collect_kernel(FakeHost(files=files, commands={"lspci-vvv": text})))
