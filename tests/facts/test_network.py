"""Network facts: real ibv_devinfo / ibstat / sysfs InfiniBand trees, NICs, peermem, NCCL settings."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuwise.capture.environment import collect_env
from gpuwise.capture.host import LiveHost
from gpuwise.facts.network import collect_network, parse_ip_addr, parse_nccl_conf
from gpuwise.facts.rdma import (
    normalize_phys_state,
    normalize_state,
    parse_ibstat,
    parse_ibv_devinfo,
    parse_sysfs_rate,
)
from tests.facts.fake_host import FakeHost, failed, json_shaped, md_blocks, missing, parse_ttar


def _ports(devices):
    return {
        (d.name, p.port): (p.state, p.phys_state, p.rate_gbps, p.link_layer) for d in devices for p in d.ports
    }


def test_ibv_devinfo_real_connectx3(real):
    devices = parse_ibv_devinfo(
        (real / "infiniband/heioy-books_ibv_devinfo_2x-connectx3-fdr.txt").read_text()
    )
    assert [d.name for d in devices] == ["mlx4_1", "mlx4_0"]
    assert {d.fw_version for d in devices} == {"2.42.5000"}
    # Plain ibv_devinfo (no -v) has no active_width/active_speed, so no rate and no phys_state.
    assert _ports(devices) == {
        ("mlx4_1", 1): ("ACTIVE", None, None, "InfiniBand"),
        ("mlx4_1", 2): ("DOWN", None, None, "InfiniBand"),
        ("mlx4_0", 1): ("ACTIVE", None, None, "InfiniBand"),
        ("mlx4_0", 2): ("DOWN", None, None, "InfiniBand"),
    }


@pytest.mark.parametrize(
    ("report", "names", "fw"),
    [
        ("stelline_asus-esc8000a-e12.md", ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"], "28.41.1000"),
        ("stelline_puget-threadripper-pro-wrx90.md", ["mlx5_0", "mlx5_1"], "28.44.1036"),
    ],
)
def test_ibv_devinfo_from_server_reports_connectx7_roce(real, report, names, fw):
    (block,) = md_blocks((real / "server_reports" / report).read_text(), "ibv_devinfo")
    net = collect_network(FakeHost(commands={"ibv_devinfo-v": block}))
    assert net.rdma_source == "ibv_devinfo-v"
    assert [d.name for d in net.rdma_devices] == names
    assert net.rdma_devices[0].fw_version == fw
    assert {p.state for d in net.rdma_devices for p in d.ports} == {"DOWN"}
    assert {p.link_layer for d in net.rdma_devices for p in d.ports} == {"Ethernet"}  # RoCE


def test_ibstat_real_connectx3(real):
    devices = parse_ibstat((real / "infiniband/heioy-books_ibstat_2x-connectx3-fdr.txt").read_text())
    assert [d.name for d in devices] == ["mlx4_0", "mlx4_1"]
    assert devices[0].fw_version == "2.42.5000"
    assert set(_ports(devices).values()) == {("ACTIVE", "LINK_UP", 56.0, "InfiniBand")}
    assert len(_ports(devices)) == 4


def test_sysfs_infiniband_tree_real(real):
    files = parse_ttar((real / "infiniband/procfs_sysfs_class_infiniband.ttar.txt").read_text())
    assert "/sys/class/infiniband/mlx4_0/ports/2/rate" in files
    net = collect_network(
        FakeHost(files=files, commands={"ibv_devinfo-v": missing("ibv_devinfo"), "ibstat": missing("ibstat")})
    )
    assert net.rdma_source == "/sys/class/infiniband"
    assert [(d.name, d.fw_version) for d in net.rdma_devices] == [
        ("hfi1_0", "1.27.0"),
        ("mlx4_0", "2.31.5050"),
        ("mlx5_0", "14.28.2006"),
    ]
    assert _ports(net.rdma_devices) == {
        ("hfi1_0", 1): ("ACTIVE", "LINK_UP", 100.0, "InfiniBand"),
        ("mlx4_0", 1): ("ACTIVE", "LINK_UP", 40.0, "InfiniBand"),
        ("mlx4_0", 2): ("ACTIVE", "LINK_UP", 40.0, "InfiniBand"),
        ("mlx5_0", 1): (
            "ACTIVE",
            "ACTIVE",
            25.0,
            "InfiniBand",
        ),  # the fixture's phys_state file says "4: ACTIVE"
    }


# The per-port part of `ibv_devinfo -v`, laid out as rdma-core prints it (tabs and field order as in
# rdma-core's ibv_devinfo.c); values for a 4X HDR port and a RoCE port with a 4X 25 Gb/s lane rate.
IBV_DEVINFO_V = """hca_id:\tmlx5_0
\ttransport:\t\t\tInfiniBand (0)
\tfw_ver:\t\t\t\t20.31.1014
\tphys_port_cnt:\t\t\t1
\tmax_mr_size:\t\t\t0xffffffffffffffff
\t\tport:\t1
\t\t\tstate:\t\t\tPORT_ACTIVE (4)
\t\t\tmax_mtu:\t\t4096 (5)
\t\t\tlink_layer:\t\tInfiniBand
\t\t\tactive_width:\t\t4X (2)
\t\t\tactive_speed:\t\t50.0 Gbps (64)
\t\t\tphys_state:\t\tLINK_UP (5)

hca_id:\tmlx5_2
\tfw_ver:\t\t\t\t16.27.1016
\t\tport:\t1
\t\t\tstate:\t\t\tPORT_DOWN (1)
\t\t\tlink_layer:\t\tEthernet
\t\t\tactive_width:\t\t4X (2)
\t\t\tactive_speed:\t\t25.0 Gbps (32)
\t\t\tphys_state:\t\tDISABLED (3)
"""


def test_ibv_devinfo_verbose_rate_is_width_times_lane_speed():
    devices = parse_ibv_devinfo(IBV_DEVINFO_V)
    assert _ports(devices) == {
        ("mlx5_0", 1): ("ACTIVE", "LINK_UP", 200.0, "InfiniBand"),
        ("mlx5_2", 1): ("DOWN", "DISABLED", 100.0, "Ethernet"),
    }
    assert devices[0].fw_version == "20.31.1014"


def test_source_order_and_reasons():
    ibstat = "CA 'mlx5_0'\n\tFirmware version: 1.0\n\tPort 1:\n\t\tState: Active\n\t\tRate: 400\n\t\tLink layer: InfiniBand\n"
    net = collect_network(FakeHost(commands={"ibv_devinfo-v": missing("ibv_devinfo"), "ibstat": ibstat}))
    assert net.rdma_source == "ibstat" and net.rdma_devices[0].ports[0].rate_gbps == 400.0
    net = collect_network(
        FakeHost(
            commands={
                "ibv_devinfo-v": failed("ibv_devinfo-v", 255, "Failed to get IB devices list"),
                "ibstat": missing("ibstat"),
            }
        )
    )
    assert net.rdma_devices == [] and net.rdma_source is None
    assert net.unknown["rdma_devices"].text == (
        "no RDMA devices found: ibv_devinfo exited 255: Failed to get IB devices list; "
        "ibstat not installed; /sys/class/infiniband: no devices"
    )


@pytest.mark.parametrize(
    ("text", "state", "phys"),
    [
        ("PORT_ACTIVE (4)", "ACTIVE", None),
        ("Active", "ACTIVE", None),
        ("4: ACTIVE", "ACTIVE", None),
        ("Polling", None, "POLLING"),
    ],
)
def test_state_normalisation(text, state, phys):
    if state:
        assert normalize_state(text) == state
    if phys:
        assert normalize_phys_state(text) == phys
    assert normalize_phys_state("5: LinkUp") == "LINK_UP"
    assert parse_sysfs_rate("100 Gb/sec (4X EDR)") == 100.0


# Modelled on this machine's `ip -j addr` (2026-11-29), plus a tunnel that sysfs was not captured for.
IP_J_ADDR = json.dumps(
    [
        {"ifname": "lo", "mtu": 65536, "operstate": "UNKNOWN", "link_type": "loopback", "address": "00:00:00:00:00:00",
         "addr_info": [{"family": "inet", "local": "127.0.0.1", "prefixlen": 8}, {"family": "inet6", "local": "::1", "prefixlen": 128}]},
        {"ifname": "eth0", "mtu": 1400, "operstate": "UP", "link_type": "ether", "address": "02:fc:00:00:00:01",
         "addr_info": [{"family": "inet", "local": "192.0.2.2", "prefixlen": 24}]},
        {"ifname": "tun0", "mtu": 1420, "operstate": "UNKNOWN", "link_type": "none", "addr_info": []},
    ]
)  # fmt: skip


def _nic_host(**extra_files):
    files = {
        "/sys/class/net/eth0/speed": "25000\n",
        "/sys/class/net/eth0/mtu": "9000\n",
        "/sys/class/net/eth0/operstate": "up\n",
        "/sys/class/net/eth0/address": "02:fc:00:00:00:01\n",
        "/sys/class/net/eth0/device/uevent": "DRIVER=mlx5_core\nPCI_SLOT_NAME=0000:17:00.0\n",
        "/sys/class/net/eth1/speed": "-1\n",
        "/sys/class/net/eth1/operstate": "down\n",
        "/sys/class/net/eth1/device/uevent": "DRIVER=ice\n",
        "/sys/class/net/lo/mtu": "65536\n",
        "/sys/class/net/lo/operstate": "unknown\n",
        "/sys/class/net/docker0/operstate": "down\n",
        **extra_files,
    }
    return FakeHost(files=files, commands={"ip-j-addr": IP_J_ADDR})


def test_nics_from_sysfs_and_ip():
    net = collect_network(_nic_host())
    nics = {n.name: n for n in net.nics}
    assert set(nics) == {"eth0", "eth1", "lo", "docker0", "tun0"}
    eth0 = nics["eth0"]
    assert (eth0.speed_mbps, eth0.mtu, eth0.driver, eth0.state, eth0.virtual) == (
        25000,
        9000,
        "mlx5_core",
        "up",
        False,
    )
    assert eth0.ipv4 == ["192.0.2.2/24"]
    assert nics["eth1"].speed_mbps is None and "'-1'" in net.unknown["nics.eth1.speed_mbps"].text
    assert nics["lo"].virtual and nics["docker0"].virtual and nics["lo"].ipv4 == ["127.0.0.1/8"]
    assert nics["tun0"].mtu == 1420 and nics["tun0"].virtual  # known only from ip: link_type "none" (tun)


def test_peermem_nccl_conf_and_env():
    modules = "nvidia_peermem 16384 0 - Live 0x0000000000000000\nnvidia 56209408 2 nvidia_peermem, Live 0x0\n"
    conf = "# tuned for IB\nNCCL_IB_HCA=mlx5_0,mlx5_1\nNCCL_SOCKET_IFNAME = eth0 # mgmt\n\nnot a setting\n"
    env = collect_env(
        {"NCCL_DEBUG": "INFO", "NCCL_IB_GID_INDEX": "3", "HF_TOKEN": "hf_secret", "PATH": "/bin"}
    )
    net = collect_network(
        FakeHost(files={"/proc/modules": modules, "/etc/nccl.conf": conf}, commands={"env": env})
    )
    assert net.nvidia_peermem_loaded is True
    assert net.nccl_conf == {"NCCL_IB_HCA": "mlx5_0,mlx5_1", "NCCL_SOCKET_IFNAME": "eth0"}
    assert net.nccl_env == {"NCCL_DEBUG": "INFO", "NCCL_IB_GID_INDEX": "3"}


def test_absent_sources_are_unknown_with_reasons():
    net = collect_network(FakeHost(files={"/proc/modules": "ext4 1 0 - Live 0x0\n"}))
    assert net.nvidia_peermem_loaded is False
    assert net.nccl_conf is None and "/etc/nccl.conf" in net.unknown["nccl_conf"].text
    assert net.unknown["nccl_env"].text == "`env` not captured"
    assert "`ip-j-addr` not captured" in net.unknown["nics"].text


def test_live_machine():
    net = collect_network(LiveHost())
    names = {n.name: n for n in net.nics}
    assert "lo" in names and names["lo"].virtual
    assert any(not n.virtual for n in net.nics)
    assert all(n.mtu for n in net.nics)


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=400))
def test_garbage_never_raises(text):
    parse_ibv_devinfo(text)
    parse_ibstat(text)
    parse_nccl_conf(text)
    parse_ip_addr(text)
    host = FakeHost(
        files={
            "/sys/class/net/x/speed": text,
            "/sys/class/infiniband/a/ports/1/rate": text,
            "/proc/modules": text,
        },
        commands={"ibv_devinfo-v": text, "ibstat": text, "ip-j-addr": text, "env": text},
    )
    collect_network(host)


@settings(max_examples=30, deadline=None)
@given(json_shaped())
def test_ip_json_of_any_shape_never_raises(data):
    parse_ip_addr(data)
    collect_network(FakeHost(commands={"ip-j-addr": json.dumps(data)}))
