"""Real hosts judged end to end (capture -> facts -> every rule) against tests/fixtures/evidence/roles/hosts/
golden.yaml: each expected finding with its reason, and no warning or critical of the role rules that
the recording's own evidence does not call for."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from gpuwise.capture.host import CaptureHost
from gpuwise.facts.collect import collect_facts
from gpuwise.facts.models import Gpu
from gpuwise.pipeline import diagnose
from tests.advise.capture_kit import assert_renders_clean, make_capture

ROLES = Path(__file__).parents[1] / "fixtures" / "evidence" / "roles" / "hosts"
GOLDEN = yaml.safe_load((ROLES / "golden.yaml").read_text())
ROLE_RULES = ("net.", "topo.", "gpu.throttle_active")
# a row of the plain nvidia-smi table: "|   0  NVIDIA RTX 6000 Ada Gene...    Off |   00000000:01:00.0 Off |"
TABLE_ROW = re.compile(
    r"^\|\s+(\d+)\s+(.+?)\s+(?:On|Off)\s+\|\s+([0-9A-Fa-f]{8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)"
)


def _table_gpus(text: str) -> list[Gpu]:
    """GPU index, model and bus id from the plain nvidia-smi table. gpuwise reads GPUs from `nvidia-smi -q`
    / NVML, which these recordings lack; the table is the same host's own list of its GPUs."""
    rows = (TABLE_ROW.match(line) for line in text.splitlines())
    return [Gpu(index=int(m[1]), name=m[2], pci_bus_id=m[3]) for m in rows if m]


@pytest.mark.parametrize("host", sorted(GOLDEN))
def test_real_host_gives_its_expected_findings(host, tmp_path):
    case = GOLDEN[host]
    commands = {cid: (ROLES / name).read_text() if name else "" for cid, name in case["commands"].items()}
    capture = make_capture(tmp_path / host, commands=commands, rcs=case.get("rcs"))
    for cid, name in case.get("stderr", {}).items():  # what the tool printed when it failed
        (capture / "commands" / f"{cid}.err").write_text((ROLES / name).read_text())
    facts = collect_facts(CaptureHost(capture))
    if "nvidia-smi" in commands:
        facts.gpus = _table_gpus(commands["nvidia-smi"])
        assert facts.gpus, "the nvidia-smi table lists GPUs"
    ports = [(d, p) for d in facts.network.rdma_devices for p in d.ports]
    if "ports" in case:
        assert len(ports) == case["ports"], [(d.name, p.port) for d, p in ports]
    if "netdevs" in case:
        read = {f"{d.name}:{p.port} {p.netdev} {p.netdev_state}" for d, p in ports}
        assert set(case["netdevs"]) <= read, sorted(read)
    report = diagnose(facts, None, "onprem")
    assert_renders_clean(lambda: report, host)
    for rule_id, want in case["expect"].items():
        got = [f for f in report.findings if f.id == rule_id]
        if want["status"] == "none":  # nothing to judge: not even a pass may claim the ports are up
            assert not got, f"{rule_id}: {want['why']}"
            continue
        if want["status"] == "absent":
            assert all(f.status == "pass" for f in got), f"{rule_id}: {want['why']}"
            continue
        assert [f.status for f in got] == [want["status"]], f"{rule_id}: {want['why']}"
        if "mapping" in want:
            assert [e.value for e in got[0].evidence] == want["mapping"], want["why"]
        if "paths" in want:
            assert sorted(e.path for e in got[0].evidence) == want["paths"], want["why"]
    alarms = {f.id for f in report.findings if f.status in ("warn", "fail") and f.id.startswith(ROLE_RULES)}
    expected = {r for r, w in case["expect"].items() if w["status"] in ("warn", "fail")}
    assert alarms <= expected, f"alarms the evidence does not call for: {sorted(alarms - expected)}"
