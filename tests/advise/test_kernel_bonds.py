"""kernel.bond_down: a bond left without any active interface, judged by the bond's role, recency and recovery."""

from __future__ import annotations

from gpuwise.facts.kernel_log import parse_kernel_log
from gpuwise.facts.models import Facts, RdmaDevice, RdmaPort
from gpuwise.pipeline import diagnose

OUTAGE = """\
[ 1203.422721] bond1: link status definitely down for interface ens3f1, disabling it
[ 1203.445599] bond1: link status definitely down for interface ens3f0, disabling it
[ 1203.467563] bond1: now running without any active interface!
"""


def _finding(text: str, facts: Facts | None = None):
    facts = facts or Facts()
    facts.evidence.kernel_logs = [parse_kernel_log(text, "dmesg")]
    found = [f for f in diagnose(facts, None, "onprem").findings if f.id == "kernel.bond_down"]
    return found[0] if found else None


def _ports(layer: str) -> Facts:
    facts = Facts()
    ports = [RdmaPort(port=1, state="DOWN", link_layer=layer, netdev=n) for n in ("ens3f0", "ens3f1")]
    ib = RdmaDevice(
        name="mlx5_0", model="MT4129", ports=[RdmaPort(port=1, state="ACTIVE", link_layer="InfiniBand")]
    )
    facts.network.rdma_devices = [RdmaDevice(name="mlx5_2", model="MT4125", ports=ports[:1]), ib]
    facts.network.rdma_devices.append(RdmaDevice(name="mlx5_3", model="MT4125", ports=ports[1:]))
    return facts


def test_bond_with_unknown_role_is_a_warning_naming_bond_and_members():
    f = _finding(OUTAGE)
    assert f is not None and f.status == "warn"
    text = " ".join(str(e.value) for e in f.evidence)
    assert "bond1" in text and "ens3f1, ens3f0" in text


def test_bond_of_compute_fabric_ports_is_critical():
    facts = _ports("Ethernet")
    facts.network.nccl_env["NCCL_SOCKET_IFNAME"] = "bond1"
    assert _finding(OUTAGE, facts).status == "fail"


def test_bond_of_ethernet_ports_next_to_infiniband_is_info():
    f = _finding(OUTAGE, _ports("Ethernet"))
    assert f.status == "info"
    assert "outside the compute fabric" in " ".join(str(e.value) for e in f.evidence)


def test_bond_that_got_a_member_back_is_info():
    back = (
        OUTAGE
        + "[ 1210.000000] bond1: link status definitely up for interface ens3f0, 25000 Mbps full duplex\n"
    )
    back += "[ 1210.000100] bond1: making interface ens3f0 the new active one\n"
    assert _finding(back).status == "info"


def test_old_outage_is_info():
    old = OUTAGE + "[ 99999.000000] mlx5_core 0000:17:00.0 eth9: Link up\n"
    assert _finding(old).status == "info"


def test_bond_that_kept_an_active_member_gives_no_finding():
    text = "[ 1202.7] bond0: link status definitely down for interface eno50, disabling it\n"
    text += "[ 1202.8] bond0: making interface eno49 the new active one\n"
    assert _finding(text) is None
