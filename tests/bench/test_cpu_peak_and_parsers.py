"""Pure pieces: the derived CPU peak from recorded text, size parsing, topology parsing."""

from __future__ import annotations

import pytest

from facts.fake_host import FakeHost
from gpuwise.bench.cpu_peak import read_cpu_peak
from gpuwise.bench.p2p import link_peak, parse_topo_links
from gpuwise.bench.sizes import geometric, human, parse_size, parse_sizes
from gpuwise.capture.host import CaptureHost
from gpuwise.errors import UserInputError
from gpuwise.facts.cpu import collect_cpu

from ..conftest import capture_dirs, real_files


def cpuinfo(vendor: str, flags: str, cores: int, mhz: float = 2000.0, threads_per_core: int = 1) -> str:
    blocks = []
    for cpu in range(cores * threads_per_core):
        blocks.append(
            f"processor\t: {cpu}\nvendor_id\t: {vendor}\nmodel name\t: Test CPU\ncpu MHz\t\t: "
            f"{mhz}\nphysical id\t: 0\ncore id\t\t: {cpu % cores}\nflags\t\t: {flags}\n"
        )
    return "\n".join(blocks)


def _peak(cpuinfo_text: str, max_freq_khz: str | None = None, lscpu: str | None = None, allowed=None):
    """The bench's derived peak for a machine whose files/commands are given, read as the probe reads it."""
    files = {"/proc/cpuinfo": cpuinfo_text}
    if max_freq_khz:
        files["/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"] = max_freq_khz
    host = FakeHost(files=files, commands={"lscpu": lscpu} if lscpu else {})
    return read_cpu_peak(host, collect_cpu(host), allowed)


def test_intel_avx512_two_fma_units():
    peak = _peak(cpuinfo("GenuineIntel", "sse2 avx fma avx2 avx512f", 4), "3000000")
    # 4 cores x 3.0 GHz x 32 fp32 lanes x 2 FLOP = 0.768 TFLOP/s
    assert peak.tflops["fp32"] == pytest.approx(0.768)
    assert peak.source["fp32"].text.startswith(
        "derived: 4 cores x 3000 MHz (max clock: "
    ) and " x 32 fp32" in (peak.source["fp32"].text)
    assert "bf16" not in peak.tflops


def test_zen4_double_pumped_avx512_and_bf16_doubles_fp32():
    peak = _peak(cpuinfo("AuthenticAMD", "avx fma avx2 avx512f avx512_bf16", 2, mhz=2500))
    assert peak.tflops["fp32"] == pytest.approx(2 * 2.5e9 * 16 * 2 / 1e12)
    assert peak.tflops["bf16"] == pytest.approx(2 * peak.tflops["fp32"])
    assert "current clock" in peak.source["fp32"].text  # no cpufreq: says which clock it used


def test_hyperthreads_count_once_and_affinity_limits_cores():
    text = cpuinfo("GenuineIntel", "avx fma avx2", 4, threads_per_core=2)
    assert _peak(text).cores == 4
    assert _peak(text, allowed=set(range(8))).cores == 4
    assert _peak(text, allowed={0, 1}).cores == 2


def test_no_simd_flags_or_no_clock_means_no_peak():
    assert _peak(cpuinfo("Weird", "fpu", 2)).tflops == {}
    no_clock = "processor\t: 0\nflags\t\t: avx2 fma\n"
    peak = _peak(no_clock)
    assert peak.tflops == {} and peak.peak("fp32")[0] is None


@pytest.mark.parametrize("path", real_files("lscpu", "*lscpu.txt"), ids=lambda p: p.name)
def test_lscpu_max_mhz_is_preferred_over_current(path):
    text = path.read_text()
    peak = _peak(cpuinfo("AuthenticAMD", "avx fma avx2", 2, mhz=1000), None, text)
    if "CPU max MHz" in text and float(text.split("CPU max MHz:")[1].split()[0]) > 0:
        assert peak.clock_basis.startswith("max clock") and peak.clock_mhz > 1000
    else:
        assert peak.clock_mhz == 1000


LSCPU_3500 = (
    "Architecture: x86_64\nCPU(s): 4\nModel name: Test CPU\nVendor ID: GenuineIntel\nCPU max MHz: 3500.0000\n"
)


def test_probe_and_bench_agree_on_the_cpu_clock_and_peak_inputs():
    """lscpu says 3500 MHz max, cpufreq 3000: the bench once read cpufreq first and the probe lscpu first."""
    host = FakeHost(
        files={
            "/proc/cpuinfo": cpuinfo("GenuineIntel", "avx fma avx2 avx512f", 4, mhz=1200),
            "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq": "3000000\n",
        },
        commands={"lscpu": LSCPU_3500 + "Flags: avx fma avx2 avx512f\nSocket(s): 1\nCore(s) per socket: 4\n"},
    )
    probe = collect_cpu(host)
    peak = read_cpu_peak(host, probe)
    assert probe.max_mhz == peak.clock_mhz == 3500.0
    assert (peak.model, peak.cores) == (probe.model, probe.cores)


@pytest.mark.parametrize("capture", capture_dirs(), ids=lambda p: p.name)
def test_probe_and_bench_agree_on_recorded_machines(capture):
    host = CaptureHost(capture)
    probe = collect_cpu(host)
    peak = read_cpu_peak(host, probe)
    assert peak.cores == probe.cores and peak.model == probe.model
    if probe.max_mhz is not None:
        assert peak.clock_mhz == probe.max_mhz


def test_sizes():
    assert parse_size("64M") == 64 << 20 and parse_size("8") == 8 and parse_size("1GiB") == 1 << 30
    assert parse_sizes("8:64") == (8, 16, 32, 64)
    assert parse_sizes("8:1G:x8")[-1] == 1 << 30 and parse_sizes("8:1G:x8")[1] == 64
    assert parse_sizes("1M, 64M,1M") == (1 << 20, 64 << 20)
    assert geometric(8, 100, 4) == (8, 32, 100)
    assert human(1 << 30) == "1 GiB" and human(12) == "12 B"
    for bad in ("abc", "8:", "1G:8", "8:1G:y2", "10X"):
        with pytest.raises(UserInputError, match="To fix|size"):
            parse_sizes(bad)


@pytest.mark.parametrize("path", real_files("topo", "*.txt"), ids=lambda p: p.name)
def test_topology_parsing_on_recorded_nvidia_smi(path):
    links = parse_topo_links(path.read_text())
    gpus = {i for pair in links for i in pair}
    assert all((j, i) in links for (i, j) in links)  # the matrix is symmetric
    if "nv18" in path.name:
        assert len(gpus) == 8 and set(links.values()) == {"NV18"}
        assert link_peak("NVIDIA H100 80GB HBM3", links[(0, 1)])[0] == "nvlink"
    if "dgx1" in path.name:
        assert links[(0, 1)] == "PIX" and links[(0, 4)] == "SYS"
    if "1x-h100" in path.name:
        assert links == {}


def test_topology_garbage_is_empty():
    assert parse_topo_links("command not found") == {} and parse_topo_links(None) == {}
