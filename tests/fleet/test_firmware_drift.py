"""VBIOS and OFED versions: read from real recordings, compared between nodes by `fleet report`."""

from __future__ import annotations

import pytest

from conftest import REAL
from gpuwise.facts.gpu import parse_nvidia_smi_q_text, parse_nvidia_smi_xml
from gpuwise.facts.models import Facts, Gpu, Network, RdmaDevice, RdmaPort
from gpuwise.facts.network import collect_network, parse_ofed_info
from gpuwise.fleet.drift import find_drift
from tests.facts.fake_host import FakeHost, missing


def test_vbios_from_real_xml_and_text_reports(real):
    xml = parse_nvidia_smi_xml((REAL / "nvidia_smi_xml" / "datakit_gtx-1050.xml").read_text())
    assert [g.vbios_version for g in xml.gpus] == ["86.07.67.00.14"]
    text = (REAL / "nvidia_smi_text" / "azhpc-diagnostics_nvidia-smi-q_8x-a100-sxm4-40gb.out").read_text()
    gpus = parse_nvidia_smi_q_text(text).gpus
    assert len(gpus) == 8 and all(g.vbios_version and g.vbios_version.count(".") == 4 for g in gpus)


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("MLNX_OFED_LINUX-23.10-1.1.9.0:\n", "MLNX_OFED_LINUX-23.10-1.1.9.0"),
        ("OFED-internal-24.10-1.1.4:\n", "OFED-internal-24.10-1.1.4"),
        ("\n\n", None),
        ("ofed_info: command not found here\n", None),
    ],
)
def test_ofed_info_line(text, version):
    assert parse_ofed_info(text) == version


IBSTAT = "CA 'mlx5_0'\n\tCA type: MT4123\n\tFirmware version: 20.31.1014\n\tPort 1:\n\t\tState: Active\n"


def _ib_host(files=None, **commands):
    return FakeHost(
        files=files, commands={"ibv_devinfo-v": missing("ibv_devinfo"), "ibstat": IBSTAT, **commands}
    )


def test_ofed_version_sources_and_reasons():
    ofed = collect_network(_ib_host(**{"ofed_info-s": "MLNX_OFED_LINUX-5.8-1.0.1.1:\n"}))
    assert ofed.rdma_devices and ofed.ofed_version == "MLNX_OFED_LINUX-5.8-1.0.1.1"
    module = collect_network(
        _ib_host(
            files={"/sys/module/mlx5_core/version": "5.8-1.0.1\n"}, **{"ofed_info-s": missing("ofed_info")}
        )
    )
    assert module.ofed_version == "mlx5_core 5.8-1.0.1"
    inbox = collect_network(_ib_host(**{"ofed_info-s": missing("ofed_info")}))
    assert inbox.ofed_version is None and "inbox" in inbox.unknown["ofed_version"].text
    no_ib = collect_network(FakeHost())
    assert no_ib.ofed_version is None and no_ib.unknown["ofed_version"].kind == "not_applicable"


def _node(vbios: str, ofed: str | None = "MLNX_OFED_LINUX-23.10-1.1.9.0") -> Facts:
    return Facts(
        gpus=[Gpu(index=i, vbios_version=vbios if i == 0 else "96.00.89.00.01") for i in range(2)],
        network=Network(
            ofed_version=ofed,
            rdma_devices=[RdmaDevice(name="mlx5_0", ports=[RdmaPort(port=1, state="ACTIVE")])],
        ),
    )


def test_fleet_drift_names_the_odd_vbios_and_ofed():
    nodes = [(f"n{i}", _node("96.00.89.00.01")) for i in range(4)]
    nodes += [
        ("oldbios", _node("96.00.74.00.0B")),
        ("oldofed", _node("96.00.89.00.01", "MLNX_OFED_LINUX-5.8")),
    ]
    nodes.append(("unknown", _node("96.00.89.00.01", None)))  # not captured is not a difference
    drift = {(d.group, d.key): d for d in find_drift(nodes)}
    assert set(drift) == {("firmware", "VBIOS (GPU 0)"), ("software", "OFED")}
    assert drift[("firmware", "VBIOS (GPU 0)")].odd == {"96.00.74.00.0B": ["oldbios"]}
    assert drift[("software", "OFED")].odd == {"MLNX_OFED_LINUX-5.8": ["oldofed"]}
