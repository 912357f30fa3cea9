"""Monitoring facts: DCGM version and running agents (comm names are cut to 15 characters)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuwise.capture.host import LiveHost
from gpuwise.facts.monitoring import agent_table, agents_running, collect_monitoring, parse_dcgmi_version
from tests.facts.fake_host import FakeHost, missing


def test_agents_from_truncated_comm_names():
    # nvidia_gpu_exporter (19 chars) and prometheus-node-exporter show up cut to 15 characters in `ps -eo comm=`.
    ps = "systemd\nnv-hostengine\ndcgm-exporter\nnvidia_gpu_expo\nprometheus-node\nbash\notelcol-contrib\n"
    mon = collect_monitoring(FakeHost(commands={"ps-comm": ps, "dcgmi-version": "dcgmi  version: 3.3.5\n"}))
    assert mon.agents_running == [
        "dcgm-exporter",
        "nv-hostengine",
        "node_exporter",
        "nvidia_gpu_exporter",
        "otelcol",
    ]
    assert mon.dcgm_version == "3.3.5"


def test_not_installed_and_not_captured():
    mon = collect_monitoring(FakeHost(commands={"dcgmi-version": missing("dcgmi")}))
    assert mon.dcgm_version is None and mon.unknown["dcgm_version"].text == "dcgmi not installed"
    assert mon.unknown["agents_running"].text == "`ps-comm` not captured"


def test_agent_table_loads():
    names = [a for a, _ in agent_table()]
    assert "dcgm-exporter" in names and len(names) == len(set(names))


def test_live_machine():
    mon = collect_monitoring(LiveHost())
    assert isinstance(mon.agents_running, list)
    assert "agents_running" not in mon.unknown  # ps is installed here


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_garbage_never_raises(text):
    parse_dcgmi_version(text)
    agents_running(text)
    collect_monitoring(FakeHost(commands={"ps-comm": text, "dcgmi-version": text}))
