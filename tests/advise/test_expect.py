"""Expectations (`--expect gpus=8,ib=4`) parsed and checked against hand-made facts."""

from __future__ import annotations

import pytest

from gpuwise.advise.expect import check_expectations, parse_expect, short_reason
from gpuwise.errors import UserInputError
from gpuwise.facts.models import Facts, Gpu, Network, PcieLink, RdmaDevice, RdmaPort, Software


def _facts(gpus: int = 8, ib_active: int = 4, driver: str = "550.54.14", width: int = 16) -> Facts:
    ports = [RdmaPort(port=1, state="ACTIVE" if i < ib_active else "DOWN") for i in range(4)]
    return Facts(
        gpus=[Gpu(index=i, pcie=PcieLink(width_current=width if i == 0 else 16)) for i in range(gpus)],
        network=Network(rdma_devices=[RdmaDevice(name=f"mlx5_{i}", ports=[p]) for i, p in enumerate(ports)]),
        software=Software(driver_version=driver),
    )


def test_parse_expect():
    assert parse_expect("gpus=8, ib=4,driver=550.54.14") == {"gpus": 8, "ib": 4, "driver": "550.54.14"}
    with pytest.raises(UserInputError, match="did you mean 'gpus'"):
        parse_expect("gpu=8")
    with pytest.raises(UserInputError, match="whole number"):
        parse_expect("gpus=eight")
    with pytest.raises(UserInputError, match="key=value"):
        parse_expect("gpus")
    with pytest.raises(UserInputError, match="To fix"):
        parse_expect(" , ")


def test_expectations_pass_and_fail():
    good = check_expectations(_facts(), {"gpus": 8, "ib": 4, "pcie_width": 16})
    assert [f.status for f in good] == ["pass", "pass", "pass"]
    bad = check_expectations(_facts(gpus=7, ib_active=3, width=8), {"gpus": 8, "ib": 4, "pcie_width": 16})
    assert [(f.id, f.status, f.priority) for f in bad] == [
        ("expect.gpus", "fail", "high"),
        ("expect.ib", "fail", "high"),
        ("expect.pcie_width", "fail", "high"),
    ]
    assert bad[0].title == "expected GPUs 8, found 7"
    reason = short_reason(bad)
    assert reason.startswith("gpuwise: expected GPUs 8, found 7") and len(reason) <= 80
