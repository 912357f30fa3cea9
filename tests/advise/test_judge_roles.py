"""Doctor judges ports, NICs and throttle reasons by their role (issue 22 item 2).

Real recordings are in tests/fixtures/evidence/roles/hosts/ (provenance and licence in its SOURCES.md);
the expected findings below were written from each recording's own evidence before doctor ran on it,
and each says why. (hosts/ is one level down so the evidence corpus test, which globs
tests/fixtures/evidence/*/*, does not take these command outputs for --evidence files.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuwise.advise.engine import run_rules
from gpuwise.facts.fabric import port_roles
from gpuwise.facts.models import RdmaDevice, RdmaPort
from gpuwise.facts.rdma import parse_ibstat, parse_ibv_devinfo
from gpuwise.facts.topology import parse_topo_m
from tests.advise.factories import healthy_node
from tests.conftest import REAL

ROLES = Path(__file__).parents[1] / "fixtures" / "evidence" / "roles" / "hosts"
DGX1_TOPO = ROLES / "topo_gengwg_dgx1-8x-v100_4x-mlx5.txt"
CX3_IBV = ROLES / "ibv_devinfo_heioy-books_2x-connectx3.txt"
CX3_IBSTAT = REAL / "infiniband" / "heioy-books_ibstat_2x-connectx3-fdr.txt"  # shared folder only

needs_real = pytest.mark.skipif(not CX3_IBSTAT.exists(), reason="shared real fixtures not present")


def _hits(facts, rule_id, env="onprem"):
    return [f for f in run_rules(facts, None, env) if f.id == rule_id]


def _ib(name, model="MT4129", rate=400.0, state="ACTIVE", layer="InfiniBand"):
    phys = "LINK_UP" if state == "ACTIVE" else "DISABLED"
    return RdmaDevice(
        name=name,
        model=model,
        ports=[RdmaPort(port=1, state=state, phys_state=phys, rate_gbps=rate, link_layer=layer)],
    )


def _ndr_host_with_management_ethernet():
    """The issue's host: 8x NDR InfiniBand rails, three down management Ethernet ports (RoCE-capable)."""
    f = healthy_node()
    f.topology.gpu_nic_links, f.topology.nic_names = None, []
    f.network.rdma_devices = [_ib(f"mlx5_{k}") for k in range(8)] + [
        _ib(f"mlx5_{k}", model="MT4125", rate=40.0, state="DOWN", layer="Ethernet") for k in (8, 9, 10)
    ]
    f.software.torch_nccl = f.software.nccl_system_version = None
    return f


def test_down_management_ethernet_is_info_not_critical():
    f = _ndr_host_with_management_ethernet()
    (down,) = _hits(f, "net.rdma_port_down")
    assert down.status == "info", "ports outside the compute fabric are at most info"
    assert not [h for h in _hits(f, "net.roce_gid_index") if h.status != "pass"], "no RoCE port in use"


def test_down_compute_rail_is_still_critical():
    f = _ndr_host_with_management_ethernet()
    f.network.rdma_devices[3].ports[0].state = "DOWN"
    (down,) = _hits(f, "net.rdma_port_down")
    assert down.status == "fail"
    assert any("mlx5_3" in e.path for e in down.evidence)
    assert not any("mlx5_8" in e.path for e in down.evidence)


def test_below_peers_compares_only_the_same_model():
    """Four healthy 100G ports (ConnectX-7 MT4129) next to 400G compute NICs of another model (MT4131)."""
    f = healthy_node()
    f.network.rdma_devices = [_ib(f"mlx5_{k}", model="MT4131", rate=400.0) for k in range(8)] + [
        _ib(f"mlx5_{k}", model="MT4129", rate=100.0) for k in range(8, 12)
    ]
    assert not _hits(f, "net.rdma_rate_below_peers")
    f.network.rdma_devices[9].ports[0].rate_gbps = 50.0  # one 100G port at half: below its own peers
    (slow,) = _hits(f, "net.rdma_rate_below_peers")
    assert [e.path for e in slow.evidence if e.path.endswith(".rate_gbps")] == [
        "network.rdma_devices[mlx5_9].ports[1].rate_gbps"
    ]


def test_nccl_ib_hca_decides_the_fabric():
    f = _ndr_host_with_management_ethernet()
    f.network.nccl_env["NCCL_IB_HCA"] = "=mlx5_0,mlx5_1"
    roles = port_roles(f)
    assert roles[("mlx5_0", 1)].compute and not roles[("mlx5_2", 1)].compute
    assert roles[("mlx5_0", 1)].why == "NCCL_IB_HCA"
    del f.network.nccl_env["NCCL_IB_HCA"]
    assert port_roles(f)[("mlx5_8", 1)].why == "Ethernet link layer next to InfiniBand ports"
    f.network.nccl_env["NCCL_IB_HCA"] = "^mlx5_8,mlx5_9,mlx5_10"
    assert port_roles(f)[("mlx5_9", 1)].compute is False


def test_unknown_nccl_version_is_not_called_old():
    f = healthy_node()
    for d in f.network.rdma_devices:
        d.ports[0].link_layer = "Ethernet"
    f.software.torch_nccl = f.software.nccl_system_version = None
    (gid,) = _hits(f, "net.roce_gid_index")
    assert gid.status == "info" and "unknown" in gid.recommendation.text
    assert "older" not in gid.title


@needs_real
def test_real_connectx3_ibstat_reads_the_model():
    """heioy-books ibstat/ibv_devinfo: 2x ConnectX-3 (CA type MT4099 / vendor_part_id 4099)."""
    assert {d.model for d in parse_ibstat(CX3_IBSTAT.read_text())} == {"MT4099"}
    assert {d.model for d in parse_ibv_devinfo(CX3_IBV.read_text())} == {"MT4099"}


def test_real_connectx3_down_port_next_to_active_peer_is_critical():
    """Evidence: each dual-port InfiniBand HCA has port 1 ACTIVE and port 2 PORT_DOWN, same model, no
    Ethernet: all ports are fabric ports, so a port down next to active peers is a fail (a cable or
    switch port), and the peers are at the same rate (no below-peers warning)."""
    f = healthy_node()
    f.topology.gpu_nic_links, f.topology.nic_names = None, []
    f.network.rdma_devices = parse_ibv_devinfo(CX3_IBV.read_text())
    (down,) = _hits(f, "net.rdma_port_down")
    assert down.status == "fail"
    assert sorted(e.path for e in down.evidence) == [
        "network.rdma_devices[mlx4_0].ports[2].state",
        "network.rdma_devices[mlx4_1].ports[2].state",
    ]


def _dgx1():
    f = healthy_node()
    f.topology = parse_topo_m(DGX1_TOPO.read_text())
    f.network.rdma_devices = [_ib(f"mlx5_{k}", model="MT4115", rate=100.0) for k in range(4)]
    return f


def test_real_dgx1_placement_passes_and_shows_the_mapping():
    """DGX-1 `topo -mp`: every GPU has a PIX NIC, two GPUs per NIC (GPU2/3 -> mlx5_1, not GPUi<->NICi)."""
    (ok,) = _hits(_dgx1(), "topo.gpu_nic_placement")
    assert ok.status == "pass"
    values = [e.value for e in ok.evidence]
    assert values[2].startswith("GPU 2 (") and values[2].endswith("-> mlx5_1 PIX")
    assert values[7].endswith("-> mlx5_3 PIX")


def test_real_dgx1_without_half_its_nics_warns_with_pxn():
    """The same matrix with mlx5_1 and mlx5_3 unplugged (their columns dropped): GPU2/3 and GPU6/7 reach
    a NIC only through the host bridge (PHB), GPU0/1 and 4/5 keep their PIX NIC."""
    f = _dgx1()
    f.topology.nic_names = ["mlx5_0", "mlx5_2"]
    f.topology.gpu_nic_links = [[row[0], row[2]] for row in f.topology.gpu_nic_links]
    f.network.rdma_devices = [d for d in f.network.rdma_devices if d.name in ("mlx5_0", "mlx5_2")]
    (warn,) = _hits(f, "topo.gpu_nic_placement")
    assert warn.status == "warn"
    text = warn.recommendation.text
    for name in ("GPU 2 (", "GPU 3 (", "GPU 6 (", "GPU 7 ("):
        assert name in text
    assert "GPU 0 (" not in text
    for var in ("NCCL_PXN_DISABLE", "NCCL_P2P_PXN_LEVEL", "NCCL_NET_GDR_LEVEL"):
        assert var in text


def _brake(f, gpus_hit):
    for g in f.gpus:
        g.temperature_c, g.power_draw_watts, g.utilization_gpu_percent = 30.0, 70.0, 0.0
        if g.index in gpus_hit:
            g.clock_event_reasons = ["gpu_idle", "hw_slowdown", "hw_power_brake_slowdown"]
    return f


def test_power_brake_on_every_idle_gpu_is_a_node_fault():
    hits = _hits(_brake(healthy_node(), range(8)), "gpu.throttle_active")
    assert len(hits) == 1, "HW Slowdown is the umbrella of the power brake: one finding, not two"
    brake = hits[0]
    assert "Power Brake" in brake.title
    assert brake.status == "fail"
    text = brake.recommendation.text
    assert "node-level" in text and "power supplies" in text and "BMC" in text
    assert "airflow" not in text and "cooling" not in text
    assert brake.evidence[2].value.startswith("GPU 2 (00000000:1A:00.0): hw_power_brake_slowdown; 30 C")


def test_power_brake_on_one_gpu_names_that_gpu():
    hits = _hits(_brake(healthy_node(), [5]), "gpu.throttle_active")
    brake = next(h for h in hits if "Power Brake" in h.title)
    assert "Only GPU 5 (00000000:1D:00.0)" in brake.recommendation.text
    assert "node-level" not in brake.recommendation.text


def test_thermal_slowdown_points_at_cooling():
    f = healthy_node()
    f.gpus[1].clock_event_reasons, f.gpus[1].temperature_c = ["sw_thermal_slowdown"], 88.0
    (hit,) = _hits(f, "gpu.throttle_active")
    assert hit.status == "warn" and "cooling" in hit.recommendation.text


def test_gpu_nic_numa_ignores_a_management_nic_next_to_the_gpus():
    """GPUs SYS to every InfiniBand rail but NODE to a management Ethernet port: still far from the fabric."""
    f = healthy_node(2)
    f.topology.nic_names = ["NIC0", "NIC1"]
    f.topology.nic_devices = {"NIC0": "mlx5_0", "NIC1": "mlx5_1"}
    f.topology.gpu_nic_links = [["SYS", "NODE"], ["SYS", "NODE"]]
    f.network.rdma_devices = [_ib("mlx5_0"), _ib("mlx5_1", model="MT4125", rate=25.0, layer="Ethernet")]
    (far,) = _hits(f, "topo.gpu_nic_numa")
    assert far.status == "warn"


def test_gpu_nic_numa_without_a_nic_legend_judges_every_nic():
    """A matrix whose NIC columns name no RDMA device (no legend): every column still counts."""
    f = healthy_node(2)
    f.topology.nic_names, f.topology.nic_devices = ["NIC0"], {}
    f.topology.gpu_nic_links = [["SYS"], ["SYS"]]
    (far,) = _hits(f, "topo.gpu_nic_numa")
    assert far.status == "warn"


def test_hw_slowdown_without_a_named_cause_is_its_own_finding():
    f = healthy_node()
    f.gpus[3].clock_event_reasons = ["hw_slowdown"]
    (hit,) = _hits(f, "gpu.throttle_active")
    assert hit.status == "fail" and hit.title.startswith("HW Slowdown")
    assert "Only GPU 3 (00000000:1B:00.0)" in hit.recommendation.text


def test_sysfs_reader_reads_the_model(tmp_path):
    from gpuwise.capture.host import CaptureHost
    from gpuwise.facts.rdma import read_sysfs_infiniband
    from tests.advise.capture_kit import make_capture

    base = "/sys/class/infiniband/mlx5_0"
    files = {
        f"{base}/hca_type": "MT4129\n",
        f"{base}/fw_ver": "28.39.1002\n",
        f"{base}/ports/1/state": "4: ACTIVE\n",
        f"{base}/ports/1/link_layer": "InfiniBand\n",
    }
    (dev,) = read_sysfs_infiniband(CaptureHost(make_capture(tmp_path / "c", files=files)))
    assert dev.model == "MT4129" and dev.ports[0].state == "ACTIVE"
