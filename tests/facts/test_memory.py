"""Memory facts from /proc/meminfo and sysfs hugepage pools."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuwise.capture.host import LiveHost
from gpuwise.facts.memory import collect_memory, parse_meminfo
from gpuwise.facts.sourcing import binary_scale
from tests.facts.explained import assert_every_none_is_explained
from tests.facts.fake_host import FakeHost

# Head of this machine's /proc/meminfo as read on 2026-11-29 (numbers in kB, as the kernel prints them).
MEMINFO = """MemTotal:       24683652 kB
MemFree:        24352212 kB
MemAvailable:   24339956 kB
SwapTotal:             0 kB
HugePages_Total:       0
HugePages_Free:        0
Hugepagesize:       2048 kB
"""


def test_meminfo_units():
    mem = collect_memory(FakeHost(files={"/proc/meminfo": MEMINFO}))
    assert mem.total_bytes == 24683652 * 1024
    assert mem.available_bytes == 24339956 * 1024
    assert mem.swap_total_bytes == 0
    assert (mem.hugepages_total, mem.hugepage_size_bytes) == (0, 2 * 1024 * 1024)
    assert mem.unknown == {}


def test_gigantic_pages_from_sysfs_when_default_pool_is_empty():
    """hugepagesz=1G hugepages=8 without default_hugepagesz: meminfo shows the empty 2 MiB pool."""
    host = FakeHost(
        files={
            "/proc/meminfo": MEMINFO,
            "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages": "0\n",
            "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages": "8\n",
        }
    )
    mem = collect_memory(host)
    assert (mem.hugepages_total, mem.hugepage_size_bytes) == (8, 1 << 30)


def test_not_captured_names_the_file():
    mem = collect_memory(FakeHost())
    assert mem.total_bytes is None
    assert mem.unknown["total_bytes"].text.startswith("/proc/meminfo not found")


def test_missing_lines_are_explained():
    mem = collect_memory(FakeHost(files={"/proc/meminfo": "MemTotal: 1000 kB\n"}))
    assert mem.total_bytes == 1024000
    assert mem.unknown["available_bytes"].text == "no MemAvailable line in /proc/meminfo"


def test_live_machine():
    mem = collect_memory(LiveHost())
    assert mem.total_bytes and mem.total_bytes > 256 * 1024 * 1024
    assert mem.available_bytes is not None and 0 < mem.available_bytes <= mem.total_bytes


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=300))
def test_garbage_never_raises(text):
    parse_meminfo(text)
    mem = collect_memory(
        FakeHost(
            files={"/proc/meminfo": text, "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages": text}
        )
    )
    assert_every_none_is_explained(mem)


@pytest.mark.parametrize(
    ("unit", "scale"),
    [
        ("", 1),
        ("B", 1),
        ("kB", 1024),
        ("KiB", 1024),
        ("k", 1024),
        ("MB", 1 << 20),
        ("mib", 1 << 20),
        ("GiB", 1 << 30),
        ("g", 1 << 30),
        ("TB", 1 << 40),
        ("PB", None),
        ("ib", None),
        ("pages", None),
    ],
)
def test_binary_scale_reads_every_spelling_tools_print(unit, scale):
    assert binary_scale(unit) == scale
