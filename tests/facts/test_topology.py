"""Topology facts from real `nvidia-smi topo -m` / `topo -mp` and `nvidia-smi nvlink -s` outputs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REAL, real_files
from gpuwise.capture.host import CaptureHost
from gpuwise.facts.topology import collect_topology, parse_nvlink_s, parse_topo_m
from tests.facts.test_gpu_text import capture_sections

# file -> (GPU count, NIC column names, a link string present in the GPU matrix, NUMA affinity per GPU)
TOPO_EXPECTED = {
    "gengwg_dgx1_8gpu_topo-mp_4x-mlx5.txt": (
        8,
        ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"],
        "PIX",
        [0] * 4 + [1] * 4,
    ),
    "ml-engineering_8x-h100_nv18_no-nic.txt": (8, [], "NV18", [0] * 4 + [1] * 4),
    "nvidia_gpu_exporter_1x-h100-vm_topo-m_ansi-escapes.txt": (1, [], "X", [0]),
    "stelline_puget-wrx90_2gpu_2nic.txt": (2, ["NIC0", "NIC1"], "PHB", [0, 0]),
}
TOPO_FILES = real_files("topo")


def _topo(real: Path, name: str):
    return parse_topo_m((real / "topo" / name).read_text())


@pytest.mark.parametrize("path", TOPO_FILES, ids=lambda p: p.name)
def test_every_real_topo_file(path: Path):
    assert path.name in TOPO_EXPECTED, f"new fixture {path.name}: add it to TOPO_EXPECTED"
    n, nics, link, numa = TOPO_EXPECTED[path.name]
    t = parse_topo_m(path.read_text())
    assert t.gpu_names == [f"GPU{i}" for i in range(n)] and t.nic_names == nics
    assert len(t.gpu_links) == n and all(len(row) == n for row in t.gpu_links)
    assert all(t.gpu_links[i][i] == "X" for i in range(n))
    assert any(link in row for row in t.gpu_links)
    assert all(re.fullmatch(r"X|NV\d+|PIX|PXB|PHB|NODE|SYS", c) for row in t.gpu_links for c in row)
    assert t.gpu_numa_affinity == numa
    if nics:
        assert len(t.gpu_nic_links) == n and all(len(row) == len(nics) for row in t.gpu_nic_links)
    else:
        assert t.gpu_nic_links is None and "gpu_nic_links" in t.unknown
    assert "gpu_links" not in t.unknown


def test_expected_table_covers_every_fixture(real):
    assert {p.name for p in TOPO_FILES} == set(TOPO_EXPECTED)


def test_h100_all_nv18_and_cpu_affinity(real):
    t = _topo(real, "ml-engineering_8x-h100_nv18_no-nic.txt")
    assert all(c == "NV18" for i, row in enumerate(t.gpu_links) for j, c in enumerate(row) if i != j)
    assert t.gpu_cpu_affinity == ["0-51,104-155"] * 4 + ["52-103,156-207"] * 4


def test_dgx1_topo_mp_old_nic_columns(real):
    t = _topo(real, "gengwg_dgx1_8gpu_topo-mp_4x-mlx5.txt")
    assert t.nic_devices == {}  # old outputs name the devices in the header, there is no legend
    assert t.gpu_links[0] == ["X", "PIX", "PHB", "PHB", "SYS", "SYS", "SYS", "SYS"]
    assert t.gpu_nic_links[0] == ["PIX", "PHB", "SYS", "SYS"] and t.gpu_nic_links[7] == [
        "SYS",
        "SYS",
        "PHB",
        "PIX",
    ]
    assert t.gpu_cpu_affinity[4] == "20-39,60-79"


def test_nic_legend(real):
    t = _topo(real, "stelline_puget-wrx90_2gpu_2nic.txt")
    assert t.nic_devices == {"NIC0": "mlx5_0", "NIC1": "mlx5_1"}
    assert t.gpu_nic_links == [["NODE", "NODE"], ["NODE", "NODE"]] and t.gpu_cpu_affinity == ["0-23", "0-23"]


def test_ansi_escapes_are_stripped(real):
    text = (real / "topo" / "nvidia_gpu_exporter_1x-h100-vm_topo-m_ansi-escapes.txt").read_text()
    assert "\x1b[4m" in text
    t = parse_topo_m(text)
    assert t.gpu_links == [["X"]] and t.gpu_cpu_affinity == ["0-19"] and t.gpu_numa_affinity == [0]


@pytest.mark.parametrize("path", real_files("server_reports", "*.md"), ids=lambda p: p.name)
def test_topo_blocks_in_server_reports(path: Path):
    block = re.search(r"nvidia-smi topo -m\n(.*?)```", path.read_text(), re.S).group(1)
    t = parse_topo_m(block)
    n = 4 if "esc8000" in path.name else 2
    assert len(t.gpu_links) == n and t.nic_names == [f"NIC{i}" for i in range(len(t.nic_names))]
    assert t.nic_devices == {f"NIC{i}": f"mlx5_{i}" for i in range(len(t.nic_names))}
    if n == 4:
        assert t.gpu_links[0] == ["X", "NODE", "SYS", "SYS"] and t.gpu_numa_affinity == [0, 0, 1, 1]


@pytest.mark.parametrize("name,body", capture_sections(r"# capabilities :: topo -m\n# \$ nvidia-smi topo -m"))
def test_topo_sections_of_captures(name, body):
    t = parse_topo_m(body)
    if "Option -m is missing its value" in body:  # an nvidia-smi that rejected the command
        assert t.gpu_links is None and "gpu_links" in t.unknown
        return
    assert t.gpu_links == [["X"]]
    if "\t\t\t\tN/A" in body:  # Windows driver leaves both affinity cells empty
        assert t.gpu_cpu_affinity == [None] and "no CPU affinity" in t.unknown["gpu_cpu_affinity"].text
        assert t.gpu_numa_affinity == [None]
    else:
        assert t.gpu_cpu_affinity[0] is not None and t.gpu_numa_affinity == [0]


# ---------------------------------------------------------------- nvlink -s


def test_nvlink_inactive_links(real):
    gpus = parse_nvlink_s(
        (real / "nvidia_smi_text" / "azhpc-diagnostics_nvlink-s_8x-v100-sxm2_inactive-links.out").read_text()
    )
    assert [g.gpu_index for g in gpus] == list(range(7)) and all(len(g.links) == 6 for g in gpus)
    inactive = {(g.gpu_index, link.link) for g in gpus for link in g.links if not link.active}
    assert inactive == {(3, 3), (3, 5), (4, 1), (5, 0), (5, 4), (6, 1)}
    assert all(link.speed_gb_s == 25.781 for g in gpus for link in g.links if link.active)
    assert all(link.speed_gb_s is None for g in gpus for link in g.links if not link.active)


@pytest.mark.parametrize(
    "name,body", capture_sections(r"# capabilities :: nvlink -s\n# \$ nvidia-smi nvlink -s")
)
def test_nvlink_sections_of_captures(name, body):
    gpus = parse_nvlink_s(body)
    assert [g.gpu_index for g in gpus] == [0]
    if "Link 0:" in body:
        assert len(gpus[0].links) == 18 and all(x.active and x.speed_gb_s == 26.562 for x in gpus[0].links)
    else:
        assert gpus[0].links == []


# ---------------------------------------------------------------- collector and robustness


def _capture(tmp_path: Path, commands: dict[str, str]) -> CaptureHost:
    (tmp_path / "commands").mkdir(parents=True)
    (tmp_path / "meta.json").write_text(json.dumps({"format": "gpuwise-capture/1", "hostname": "t"}))
    for name, text in commands.items():
        (tmp_path / "commands" / name).write_text(text)
    return CaptureHost(tmp_path)


def test_collect_topology_from_capture(real, tmp_path):
    host = _capture(
        tmp_path,
        {
            "nvidia-smi-topo-m.txt": (real / "topo" / "stelline_puget-wrx90_2gpu_2nic.txt").read_text(),
            "nvidia-smi-nvlink-s.txt": "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)\nNvlink queries are not supported for Devices in MIG mode\n",
        },
    )
    t = collect_topology(host)
    assert t.gpu_links == [["X", "PHB"], ["PHB", "X"]]
    assert t.nvlinks[0].links == [] and "not supported for Devices in MIG mode" in t.unknown["nvlinks"].text


def test_collect_topology_not_captured(tmp_path):
    t = collect_topology(_capture(tmp_path, {"nvidia-smi-topo-m.rc": "9", "nvidia-smi-topo-m.txt": ""}))
    assert t.gpu_links is None and "exited 9" in t.unknown["gpu_links"].text
    assert t.nvlinks is None and "not captured" in t.unknown["nvlinks"].text


@settings(max_examples=60, deadline=None)
@given(cut=st.integers(min_value=0, max_value=1400), junk=st.text(max_size=30))
def test_truncated_topo_never_raises(cut, junk):
    path = REAL / "topo" / "gengwg_dgx1_8gpu_topo-mp_4x-mlx5.txt"
    if not path.exists():
        pytest.skip("real fixtures absent")
    t = parse_topo_m(path.read_text()[:cut] + junk)
    if t.gpu_links is None:
        assert "gpu_links" in t.unknown
    else:
        assert len(t.gpu_links) == len(t.gpu_names)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=300))
def test_garbage_never_raises(text):
    t = parse_topo_m(text)
    assert t.gpu_links is not None or "gpu_links" in t.unknown
    parse_nvlink_s(text)
