"""Expectations (`--expect gpus=8,ib=4`) parsed and checked against hand-made facts."""

from __future__ import annotations

import pytest

from gpuwise.advise.expect import check_expectations, parse_expect, short_reason
from gpuwise.errors import UserInputError
from tests.advise.factories import expectation_node


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
    good = check_expectations(expectation_node(), {"gpus": 8, "ib": 4, "pcie_width": 16})
    assert [f.status for f in good] == ["pass", "pass", "pass"]
    bad = check_expectations(
        expectation_node(gpus=7, ib_active=3, width=8), {"gpus": 8, "ib": 4, "pcie_width": 16}
    )
    assert [(f.id, f.status, f.priority) for f in bad] == [
        ("expect.gpus", "fail", "high"),
        ("expect.ib", "fail", "high"),
        ("expect.pcie_width", "fail", "high"),
    ]
    assert bad[0].title == "expected GPUs 8, found 7"
    reason = short_reason(bad)
    assert reason.startswith("gpuwise: expected GPUs 8, found 7") and len(reason) <= 80
