"""CPU/NUMA facts from real lscpu / numactl outputs, fallbacks, the three failure cases, and this machine."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REAL, real_files
from gpuwise.capture.host import LiveHost
from gpuwise.facts.cpu import collect_cpu, parse_cpuinfo, parse_lscpu, parse_lscpu_table, parse_numactl
from tests.facts.fake_host import FakeHost, failed, md_blocks, missing

GIB_MB = 1 << 20

# file -> (model, sockets, physical cores, logical CPUs, NUMA nodes, max MHz), read off each file by eye:
# e.g. the X7550 box prints Socket(s) 4 x Core(s) per socket 8 = 32 cores, CPU(s) 64 (2 threads per core),
# and three NUMA lines (node0, node2, node3).
LSCPU_EXPECTED = {
    "stelline_asus-esc8000a-e12_lscpu.txt": ("AMD EPYC 9374F 32-Core Processor", 2, 64, 64, 2, 3850.0),
    "stelline_asus-esc8000a-e12_lscpu-e.txt": (None, 2, 64, 64, 2, 3850.0),
    "stelline_puget-wrx90_lscpu.txt": ("AMD Ryzen Threadripper PRO 7965WX 24-Cores", 1, 24, 24, 1, 5362.0),
    "util-linux_expected_lscpu-x86_64-64cpu.txt": (
        "Intel(R) Xeon(R) CPU           X7550  @ 2.00GHz",
        4,
        32,
        64,
        3,
        1996.0,
    ),
    "util-linux_expected_lscpu-x86_64-epyc_7451.txt": (
        "AMD EPYC 7451 24-Core Processor",
        2,
        48,
        96,
        8,
        2300.0,
    ),
}


@pytest.mark.parametrize("path", real_files("lscpu"), ids=lambda p: p.name)
def test_every_real_lscpu_file(path: Path):
    assert path.name in LSCPU_EXPECTED, f"new fixture {path.name}: add its expected values"
    model, sockets, cores, threads, numa, mhz = LSCPU_EXPECTED[path.name]
    cpu = collect_cpu(FakeHost(commands={"lscpu": path.read_text()}))
    assert (cpu.model, cpu.sockets, cpu.cores, cpu.threads, cpu.numa_nodes, cpu.max_mhz) == (
        model,
        sockets,
        cores,
        threads,
        numa,
        mhz,
    )
    if model is None:
        assert "model" in cpu.unknown


def test_wrapped_flags_are_unwrapped_exactly(real):
    """The tree layout wraps Flags mid-word at a fixed width; both Zen 4 boxes must give the same flag set."""
    asus = parse_lscpu((real / "lscpu/stelline_asus-esc8000a-e12_lscpu.txt").read_text())["Flags"].split()
    puget = parse_lscpu((real / "lscpu/stelline_puget-wrx90_lscpu.txt").read_text())["Flags"].split()
    # Words cut at the wrap in one file or the other (a|md_lbr_v2, cmp_l|egacy, xsaveerptr|rdpru, clze|ro, ...)
    for flag in (
        "amd_lbr_v2",
        "cmp_legacy",
        "hw_pstate",
        "clwb",
        "xsaveerptr",
        "rdpru",
        "fsrm",
        "extd_apicid",
    ):
        assert flag in asus and flag in puget, flag
    assert set(asus) ^ set(puget) == {"v_vmsave_vmload"}  # the only real difference between the two CPUs
    assert len(asus) == len(set(asus)) == 162


def test_lscpu_numa_cpu_lists(real):
    cpu = collect_cpu(
        FakeHost(
            commands={"lscpu": (real / "lscpu/util-linux_expected_lscpu-x86_64-epyc_7451.txt").read_text()}
        )
    )
    assert [n.id for n in cpu.numa] == list(range(8))
    assert cpu.numa[0].cpus == "0-5,48-53" and cpu.numa[7].cpus == "42-47,90-95"
    assert (
        cpu.architecture is None and "architecture" in cpu.unknown
    )  # the util-linux harness drops that line


def test_numactl_real_single_node(real):
    nodes = parse_numactl((real / "numactl/stelline_puget-wrx90_numactl-H.txt").read_text())
    assert len(nodes) == 1
    assert nodes[0].cpus == "0-23"
    assert nodes[0].memory_total_bytes == 128295 * GIB_MB and nodes[0].memory_free_bytes == 1724 * GIB_MB


def test_numactl_from_server_report_two_nodes(real):
    report = (real / "server_reports/stelline_asus-esc8000a-e12.md").read_text()
    (block,) = md_blocks(report, "numactl --hardware")
    lscpu = (real / "lscpu/stelline_asus-esc8000a-e12_lscpu.txt").read_text()
    cpu = collect_cpu(FakeHost(commands={"numactl-H": block, "lscpu": lscpu}))
    assert cpu.numa_nodes == 2
    assert [(n.id, n.cpus, n.memory_total_bytes) for n in cpu.numa] == [
        (0, "0-31", 193129 * GIB_MB),
        (1, "32-63", 193477 * GIB_MB),
    ]


def test_sysfs_numa_and_governor_mixed():
    host = FakeHost(
        files={
            "/sys/devices/system/node/node0/cpulist": "0-3\n",
            "/sys/devices/system/node/node0/meminfo": "Node 0 MemTotal:  1024 kB\nNode 0 MemFree:  512 kB\n",
            "/sys/devices/system/node/node1/cpulist": "4-7\n",
            "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "performance\n",
            "/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor": "powersave\n",
            "/sys/devices/system/cpu/cpu2/cpufreq/scaling_governor": "performance\n",
            "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq": "3500000\n",
        }
    )
    cpu = collect_cpu(host)
    assert cpu.numa_nodes == 2 and cpu.numa[0].memory_total_bytes == 1024 * 1024
    assert cpu.governor == "mixed: performance (2), powersave (1)"
    assert cpu.max_mhz == 3500.0
    assert "numa" in cpu.unknown  # node1 has no meminfo and numactl was not captured


CPUINFO_2S_HT = "".join(
    f"processor\t: {i}\nvendor_id\t: GenuineIntel\nmodel name\t: Test CPU\nphysical id\t: "
    f"{i // 4}\ncore id\t\t: {(i % 4) // 2}\nflags\t\t: fpu sse avx2\n\n"
    for i in range(8)
)


def test_cpuinfo_fallback_when_lscpu_missing():
    cpu = collect_cpu(FakeHost(files={"/proc/cpuinfo": CPUINFO_2S_HT}, commands={"lscpu": missing("lscpu")}))
    assert (cpu.model, cpu.sockets, cpu.cores, cpu.threads, cpu.flags) == (
        "Test CPU",
        2,
        4,
        8,
        ["fpu", "sse", "avx2"],
    )
    assert cpu.architecture is None and cpu.unknown["architecture"].text.startswith("lscpu not installed")


@pytest.mark.parametrize(
    ("result", "expected", "kind"),
    [
        (None, "`lscpu` not captured", "not_captured"),
        (missing("lscpu"), "lscpu not installed", "tool_missing"),
        (
            failed("lscpu", 1, "lscpu: failed to determine number of CPUs"),
            "lscpu exited 1: lscpu: failed to determine",
            "absent",  # lscpu failed and /proc/cpuinfo is absent: the least conclusive of the two
        ),
    ],
)
def test_three_failure_cases_are_kept_apart(result, expected, kind):
    host = FakeHost(commands={"lscpu": result} if result else {})
    cpu = collect_cpu(host)
    assert cpu.model is None
    assert cpu.unknown["model"].text.startswith(expected)
    assert "/proc/cpuinfo not found" in cpu.unknown["model"].text
    assert cpu.unknown["model"].kind == kind


def test_live_machine():
    cpu = collect_cpu(LiveHost())
    assert cpu.threads == os.cpu_count()
    assert cpu.cores and 1 <= cpu.cores <= cpu.threads
    assert cpu.model and cpu.sockets and cpu.numa_nodes and cpu.numa_nodes >= 1
    assert cpu.flags and len(cpu.flags) > 10


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=400))
def test_parsers_never_raise_on_garbage(text):
    parse_lscpu(text)
    parse_lscpu_table(text)
    parse_cpuinfo(text)
    parse_numactl(text)
    collect_cpu(FakeHost(files={"/proc/cpuinfo": text}, commands={"lscpu": text, "numactl-H": text}))


@settings(max_examples=40, deadline=None)
@given(cut=st.integers(min_value=0, max_value=6000))
def test_truncated_real_lscpu_never_raises(cut):
    files = real_files("lscpu")
    if not files:
        pytest.skip(f"real fixtures not present at {REAL}")
    for path in files:
        cpu = collect_cpu(FakeHost(commands={"lscpu": path.read_text()[:cut]}))
        assert cpu.threads is None or cpu.threads > 0
