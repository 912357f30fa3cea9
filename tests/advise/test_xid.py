"""Xid events: parsed from dmesg text in the driver's format, judged with the sourced Xid catalogue."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuwise.advise.engine import registry, run_rules
from gpuwise.advise.rules.gpu_xid import xid_catalog
from gpuwise.facts.kernel import collect_kernel
from gpuwise.facts.models import Facts, Gpu
from gpuwise.facts.xid import MAX_EVENTS, parse_xid_lines
from tests.facts.fake_host import FakeHost

# Lines laid out as the NVIDIA driver prints them (timestamped dmesg; old drivers omit "PCI:").
DMESG = """\
[    2.101234] nvidia: loading out-of-tree module taints kernel.
[  179.437927] NVRM: GPU at PCI:0000:3b:00: GPU-11111111-2222-3333-4444-555555555555
[  179.437933] NVRM: Xid (PCI:0000:3b:00): 79, pid=0, name=python, GPU has fallen off the bus.
[  201.000001] NVRM: Xid (PCI:0000:86:00): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.
[  202.000001] NVRM: Xid (0000:86:00): 13, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0)
[  203.500000] eth0: link up
"""


def test_parse_xid_lines_reads_code_bus_detail_and_time():
    events = parse_xid_lines(DMESG)
    assert [(e.xid, e.pci_bus_id) for e in events] == [
        (79, "0000:3b:00"),
        (63, "0000:86:00"),
        (13, "0000:86:00"),
    ]
    assert events[0].timestamp == "179.437933"
    assert events[0].detail.endswith("GPU has fallen off the bus.")


def test_parse_keeps_only_the_newest_events():
    text = "\n".join(f"[{i}.0] NVRM: Xid (PCI:0000:3b:00): 13, x" for i in range(MAX_EVENTS + 50))
    events = parse_xid_lines(text)
    assert len(events) == MAX_EVENTS and events[-1].timestamp == f"{MAX_EVENTS + 49}.0"


@given(st.text(max_size=400))
def test_parse_never_raises_on_garbage(text):
    for e in parse_xid_lines(text + "\nNVRM: Xid (" + text):
        assert 0 <= e.xid < 10000


def test_kernel_facts_record_events_or_why_not():
    k = collect_kernel(FakeHost(commands={"dmesg": DMESG}))
    assert [e.xid for e in k.xid_events] == [79, 63, 13]
    k = collect_kernel(FakeHost())
    assert k.xid_events is None and "xid_events" in k.unknown


def _doctor(dmesg: str | None, gpus=()):
    facts = Facts(gpus=list(gpus))
    facts.kernel.xid_events = None if dmesg is None else parse_xid_lines(dmesg)
    rule = registry()["gpu.xid_errors"]
    return run_rules(facts, None, "onprem", [rule])


def test_fallen_off_the_bus_is_critical_and_names_the_gpu():
    gpus = [Gpu(index=2, pci_bus_id="00000000:3B:00.0"), Gpu(index=5, pci_bus_id="00000000:86:00.0")]
    (f,) = _doctor(DMESG, gpus)
    assert f.status == "fail" and f.priority == "high"
    assert f.evidence[0].path == "kernel.xid_events[xid=79]"
    # named as nvidia-smi and DCGM name it: its index and bus id, never a position in gpuwise's list
    assert "on GPU 2 (00000000:3B:00.0):" in f.evidence[0].value
    assert "GPU 5 (00000000:86:00.0)" in " ".join(str(e.value) for e in f.evidence)
    assert "gpus[" not in " ".join(str(e.value) for e in f.evidence) + f.recommendation.text


def test_an_xid_on_a_gpu_gpuwise_did_not_read_names_its_bus():
    (f,) = _doctor(DMESG)
    assert "the GPU at 0000:3b:00" in f.evidence[0].value


def test_application_xids_alone_are_info():
    (f,) = _doctor("[1.0] NVRM: Xid (PCI:0000:3b:00): 31, pid=7, MMU Fault: ENGINE GRAPHICS")
    assert f.status == "info"


def test_no_events_is_a_pass_and_unreadable_log_says_nothing():
    (f,) = _doctor("[1.0] usb 1-1: new device\n")
    assert f.status == "pass"
    assert _doctor(None) == []


def test_unknown_code_is_a_warning_pointing_at_the_catalogue():
    (f,) = _doctor("[1.0] NVRM: Xid (PCI:0000:3b:00): 999, something new")
    assert f.status == "warn" and "not in gpuwise's catalogue" in f.evidence[0].value


@pytest.mark.parametrize("code,info", sorted(xid_catalog().items()))
def test_every_catalogue_row_cites_nvidia(code, info):
    assert "NVIDIA" in info.source and info.severity in ("fail", "warn", "info")


def test_an_xid_before_the_last_reboot_is_read_from_the_previous_boots_journal():
    """Synthetic journal line in the driver's format: a node that crashed on Xid 79 and was rebooted shows
    nothing in this boot's dmesg; the previous boot's journal still has it."""
    previous = "2026-11-30T10:00:00+0000 node kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.\n"
    host = FakeHost(commands={"dmesg": "[    2.1] nvidia: loading module\n", "journalctl-k-b-1": previous})
    k = collect_kernel(host)
    assert [(e.xid, e.boot) for e in k.xid_events] == [(79, "previous")]
    facts = Facts(gpus=[Gpu(index=0, pci_bus_id="00000000:3B:00.0")])
    facts.kernel.xid_events = k.xid_events
    (f,) = run_rules(facts, None, "onprem", [registry()["gpu.xid_errors"]])
    assert f.status == "fail"
    assert "GPU 0 (00000000:3B:00.0) before the last reboot (journalctl -k -b -1)" in f.evidence[0].value


def test_fallen_off_the_bus_without_an_xid_line_is_read_as_xid_79():
    """The driver's report without an Xid (NVSentinel#155's three lines, in the journal's form here, and
    Bumblebee#554's one line) is Xid 79; a GPU with its own Xid 79 line is not counted twice."""
    journal = (
        "Oct 25 10:00:01 n1 kernel: NVRM: The NVIDIA GPU 0000:b3:00.0\n"
        "Oct 25 10:00:01 n1 kernel:                NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
        "Oct 25 10:00:01 n1 kernel:                NVRM: fallen off the bus and is not responding to commands.\n"
    )
    [e] = parse_xid_lines(journal)
    assert (e.xid, e.pci_bus_id) == (79, "0000:b3:00.0") and "without an Xid" in e.detail
    both = (
        "[   49.261458] NVRM: GPU at 0000:01:00.0 has fallen off the bus.\n"
        "[   49.261460] NVRM: Xid (PCI:0000:01:00): 79, pid=1, GPU has fallen off the bus.\n"
    )
    [e] = parse_xid_lines(both)
    assert e.xid == 79 and e.pci_bus_id == "0000:01:00" and "without" not in e.detail
    assert (
        parse_xid_lines("NVRM: The NVIDIA GPU 0000:b3:00.0\nNVRM: loading NVIDIA UNIX Open Kernel Module\n")
        == []
    )
