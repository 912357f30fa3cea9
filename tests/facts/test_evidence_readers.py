"""Readers of pasted evidence: launcher prefixes, fences and CRLF; trimmed nccl-tests tables and rank lines
without '#'; kernel-log timestamp formats; DCGM per-GPU results under a summary; NVML's 'all links are
inActive'; capture and doctor --from on this machine."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import REAL
from gpuwise.advise.engine import registry, run_rules
from gpuwise.bench.nccl_files import read_nccl_text
from gpuwise.bench.nccl_tests import parse, to_measurement
from gpuwise.cli import app
from gpuwise.commands.evidence_files import read_evidence
from gpuwise.errors import UserInputError
from gpuwise.facts.dcgm_diag import parse_dcgm_diag
from gpuwise.facts.log_time import LineClock
from gpuwise.facts.models import Facts, Gpu, Topology
from gpuwise.facts.paste import unpaste
from gpuwise.facts.topology import parse_nvlink_s

NCCL = REAL / "nccl_tests"
SUPERBENCH = NCCL / "superbench_nccl_allreduce.log"


def _real(path: Path) -> str:
    if not path.is_file():
        pytest.skip(f"{path} not present")
    return path.read_text(encoding="utf-8")


def _run(text: str, name: str = "all_reduce.log"):
    measurements, _logs = read_nccl_text(text, Path(name), "--evidence")
    (m,) = measurements
    return m


def _pasted_variants(text: str) -> dict[str, str]:
    lines = text.splitlines()
    table = [
        ln for ln in lines if not re.search(r"nThread|Using devices|Avg bus bandwidth|Out of bounds", ln)
    ]
    return {
        "srun -l prefix": "\n".join(f"{i % 16}: {ln}" for i, ln in enumerate(lines)),
        "mpirun tag": "\n".join(f"[1,{i % 8}]<stdout>:{ln}" for i, ln in enumerate(lines)),
        "markdown fence and CRLF": "```text\r\n" + "\r\n".join(lines) + "\r\n```\r\n",
        "no banner, no Avg line": "\n".join(table),
        "rank lines without #": "\n".join(re.sub(r"^#(\s+Rank)", r"\1", ln) for ln in lines),
    }


@pytest.mark.parametrize("variant", list(_pasted_variants("x")))
def test_pasted_nccl_tests_read_like_the_original(variant):
    text = _real(SUPERBENCH)
    original = _run(text)
    pasted = _run(_pasted_variants(text)[variant])
    assert pasted.value == original.value
    assert pasted.params.get("ranks") == original.params.get("ranks") or variant == "no banner, no Avg line"


def test_a_rank_line_without_hash_is_counted():
    text = _real(SUPERBENCH)
    ranks = [ln for ln in text.splitlines() if re.match(r"^#\s+Rank", ln)]
    if len(ranks) < 2:
        pytest.skip("fixture has fewer than two rank lines")
    one_bare = text.replace(ranks[-1], ranks[-1].lstrip("#"), 1)
    assert len(parse(one_bare).hosts) == len(ranks)  # the old reader dropped it: 15 of 16


def test_avg_bus_bandwidth_is_kept_beside_the_plateau():
    text = _real(SUPERBENCH)
    run = parse(text)
    m = to_measurement(run, "x")
    assert run.avg_busbw_gb_s is not None and m.extra["avg_busbw_gb_s"] == run.avg_busbw_gb_s
    assert m.value >= run.avg_busbw_gb_s  # the mean over all sizes includes the small ones


def test_unpaste_strips_quotes_and_keeps_data_rows():
    text = "> ```\n> 0: [1,0]<stdout>:     1048576   262144  float  sum  1035.3\n> ```"
    assert unpaste(text).strip() == "1048576   262144  float  sum  1035.3"


@pytest.mark.parametrize(
    ("line", "clock"),
    [
        ("[ 1773.436397] pcieport 0000:00:1b.4: AER: x", "boot"),
        ("[Fri Aug 30 11:43:09 2024] NVRM: Xid", "wall"),
        ("2024-04-29T14:55:41,678628+02:00 pool invoked oom-killer", "wall"),
        ("2024-04-29T14:55:41+0200 host kernel: x", "wall"),
        ("Mar 27 15:37:34 cc1 kernel: x", "wall"),
        ("11月 15 14:15:47 leon nv-fabricmanager[4177]: x", "wall"),
        ("[Jul 09 2024 18:14:07] [ERROR] [tid 12727] x", "wall"),
        ("[May19 19:57] CMCI storm detected", "wall"),
    ],
)
def test_kernel_log_timestamp_formats(line, clock):
    t, got, stamp, _rest = LineClock().read(line)
    assert t is not None and got == clock and stamp


def test_iso_offsets_and_dmesg_deltas_are_applied():
    c = LineClock()
    a = c.read("2024-04-29T14:55:41+02:00 x")[0]
    b = c.read("2024-04-29T12:55:41Z x")[0]
    assert a == b
    c = LineClock()
    c.read("[  100.000000] x")
    assert c.read("[  +2.500000] y")[0] == pytest.approx(102.5)


def test_dcgm_per_gpu_failure_under_a_pass_summary_fails():
    # DCGM 4.x layout (test summary, then one line per GPU); constructed, not a recording: the corpus has no
    # 4.x table with this case yet
    table = """\
+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
+-----  Stress  ------------+------------------------------------------------+
| targeted_power            | Pass                                           |
|                           | GPU0: Pass                                     |
|                           | GPU1: Fail                                     |
| Warning: GPU1             | Power did not reach the target                 |
"""
    diag = parse_dcgm_diag(table, "diag.txt")
    facts = Facts(
        gpus=[Gpu(index=0, pci_bus_id="00000000:18:00.0"), Gpu(index=1, pci_bus_id="00000000:2A:00.0")]
    )
    facts.evidence.dcgm_diag = [diag]
    (f,) = run_rules(facts, None, "onprem", [registry()["gpu.dcgm_diag"]])
    text = " ".join(str(e.value) for e in f.evidence)
    assert f.status == "fail" and "GPU 1 (00000000:2A:00.0)" in text and "summary line" in text
    assert "Power did not reach the target" in text and "GPU 0" not in text


def _nvlink_facts(text: str, names: dict[int, str] | None = None) -> Facts:
    facts = Facts(topology=Topology(nvlinks=parse_nvlink_s(text)))
    facts.gpus = [Gpu(index=i, name=n) for i, n in (names or {}).items()]
    return facts


def _nvlink(facts: Facts):
    return run_rules(facts, None, "onprem", [registry()["gpu.nvlink_inactive"]])


def test_all_links_inactive_on_an_nvlink_model_is_a_failed_link():
    v100 = _real(REAL / "nvidia_smi_text" / "azhpc-diagnostics_nvlink-s_8x-v100-sxm2_inactive-links.out")
    gpu0 = v100.split("GPU 1:")[0]
    text = (
        gpu0
        + "GPU 1: Tesla V100-SXM2-32GB (UUID: GPU-b5c990f9-037b-c1c8-380e-f7b385a2b374)\n"
        + ("NVML: Unable to retrieve Nvlink information as all links are inActive\n")
    )
    (f,) = _nvlink(_nvlink_facts(text))
    assert f.status == "fail" and "GPU 1" in f.recommendation.text  # the old rule passed: "all 6 ... active"


def test_all_links_inactive_on_a_card_without_onboard_nvlink_is_not_judged():
    capture = _real(
        REAL
        / "nvidia_smi_captures"
        / "nvidia_gpu_exporter_linux-x86_64__nvidia-geforce-rtx-2080-super__595.71.05.txt"
    )
    block = capture.split("# $ nvidia-smi nvlink -s", 1)[1].split("\n#", 2)[1]
    assert "all links are inActive" in block
    assert _nvlink(_nvlink_facts(block)) == []  # the old rule said "all 0 NVLink links are active"


@pytest.mark.parametrize(
    "content",
    [b"", b"\x00\xff" * 5000, b"x" * 200_000, b"just some words\r\n"],
    ids=["empty", "binary", "one huge line", "prose"],
)
def test_hostile_evidence_files_are_refused_clearly(tmp_path, content):
    path = tmp_path / "evidence.txt"
    path.write_bytes(content)
    with pytest.raises(UserInputError) as err:
        read_evidence([path], Facts())
    assert str(path) in str(err.value) and err.value.fix


def test_capture_records_the_new_sources_and_doctor_from_shows_them(tmp_path):
    runner = CliRunner()
    out = tmp_path / "cap"
    result = runner.invoke(app, ["capture", "-o", str(out)])
    assert result.exit_code == 0, result.output
    recorded = json.loads((out / "meta.json").read_text())["commands"]
    assert {"dcgmi-diag-r1-j", "journalctl-k", "tail-fabricmanager-log", "journalctl-fabricmanager"} <= set(
        recorded
    )
    assert recorded["dcgmi-diag-r1-j"]["status"] == "missing"  # no DCGM on this VM: recorded as missing
    assert recorded["dcgmi-nvlink-link-status"]["status"] == "missing"
    result = runner.invoke(app, ["doctor", "--from", str(out), "--format", "json", "--no-history"])
    report = json.loads(result.stdout)
    (src,) = [f for f in report["findings"] if f["id"] == "evidence.sources"]
    paths = {e["path"] for e in src["evidence"]}
    assert "evidence.unknown.dcgm_diag" in paths and "evidence.unknown.fabric_manager" in paths
    assert report["facts"]["evidence"]["unknown"]["dcgm_diag"]["kind"] == "tool_missing"
    assert report["facts"]["evidence"]["unknown"]["dcgm_nvlink"]["kind"] == "tool_missing"


def test_a_whole_journal_with_fabric_manager_and_kernel_lines_reads_both(tmp_path):
    corpus = Path(__file__).parent.parent / "fixtures" / "evidence"
    journal = tmp_path / "journal.txt"
    journal.write_text(
        (corpus / "fabric_manager" / "gpu-operator-issue610_journal_fm-nothing-to-do-a40.log").read_text()
        + (corpus / "kernel" / "cubecos-issue733_journal_mlx5-eth1-link-up-repeated.log").read_text()
    )
    facts = Facts()
    read_evidence([journal], facts)
    assert facts.evidence.fabric_manager and facts.evidence.kernel_logs
    found = {
        f.id: f.status
        for f in run_rules(
            facts, None, "onprem", [registry()["fabric.manager_start"], registry()["kernel.link_flaps"]]
        )
    }
    # the journal ends in November, the flaps were in March: old repeated events are kept, below recent ones
    assert found == {"fabric.manager_start": "info", "kernel.link_flaps": "info"}


def test_nvswitch_sxid_lines_in_the_kernel_log():
    # SXid line layout of the NVSwitch driver (constructed: the corpus has no citable recording of one yet)
    from gpuwise.facts.kernel_log import parse_kernel_log

    text = "[  117.984502] nvidia-nvswitch3: SXid (PCI:0000:08:00.0): 22013, Non-fatal, Link 60 Minion Link DLREQ interrupt\n"
    facts = Facts()
    facts.evidence.kernel_logs = [parse_kernel_log(text, "dmesg")]
    (f,) = run_rules(facts, None, "onprem", [registry()["fabric.nvswitch_errors"]])
    assert f.status == "warn" and "22013" in f.evidence[0].value and "0000:08:00.0" in f.evidence[0].value


def _fm(text: str):
    from gpuwise.facts.fabric_manager import parse_fabric_manager

    facts = Facts()
    facts.evidence.fabric_manager = [parse_fabric_manager(text, "fm.log")]
    return run_rules(facts, None, "onprem", [registry()["fabric.manager_start"]])


def test_fabric_manager_restart_and_failure():
    # journal lines in systemd's layout (constructed around the unit's real start message)
    start = "Mar 03 18:{m:02d}:51 node systemd[1]: Starting NVIDIA fabric manager service...\n"
    (restarted,) = _fm(start.format(m=10) + start.format(m=38))
    assert restarted.status == "warn" and "NVLS" in restarted.recommendation.text
    assert _fm(start.format(m=10)) == []  # one start: a boot, nothing to say
    failed = "Mar 03 18:39:19 node systemd[1]: nvidia-fabricmanager.service: Main process exited, code=exited, status=1/FAILURE\n"
    (f,) = _fm(start.format(m=39) + failed)
    assert f.status == "fail"


def test_dcgm_warn_names_the_gpu_and_the_message():
    table = """\
| Diagnostic                | Result                                         |
+-----  Deployment  --------+------------------------------------------------+
| Persistence Mode          | Warn - GPU: 0                                  |
| Warning                   | GPU 0 Persistence mode for GPU 0 is disabled.  |
"""
    facts = Facts()
    facts.evidence.dcgm_diag = [parse_dcgm_diag(table, "diag.txt")]
    (f,) = run_rules(facts, None, "onprem", [registry()["gpu.dcgm_diag"]])
    assert f.status == "warn" and "Persistence mode for GPU 0 is disabled" in f.evidence[0].value


def test_previous_boot_kernel_log_is_read_besides_this_boots_journal(tmp_path):
    """`journalctl -k -b -1` is where a node that crashed logged its last events: read with this boot's
    journal (the syslog files span boots already); its absence is said, with journalctl's words."""
    from gpuwise.capture.host import CaptureHost
    from gpuwise.facts.evidence import collect_evidence
    from tests.advise.capture_kit import make_capture

    kern = "2026-11-30T10:00:0{i}+0000 node kernel: mlx5_core 0000:1a:00.0 ib0: Link down\n"
    lines = "".join(kern.format(i=i) for i in range(3))
    both = make_capture(
        tmp_path / "both",
        {"journalctl-k": "2026-12-01T08:00:00+0000 node kernel: hello\n", "journalctl-k-b-1": lines},
    )
    ev = collect_evidence(CaptureHost(both))
    assert [log.source for log in ev.kernel_logs] == ["journalctl-k", "journalctl-k-b-1"]
    assert ev.kernel_logs[1].events and "kernel_log_previous_boot" not in ev.unknown

    gone = tmp_path / "gone"
    make_capture(
        gone, {"journalctl-k": "2026-12-01T08:00:00+0000 node kernel: hello\n", "journalctl-k-b-1": ""}
    )
    (gone / "commands" / "journalctl-k-b-1.err").write_text(
        "Data from the specified boot (-1) is not available: No such boot ID in journal\n"
    )
    (gone / "commands" / "journalctl-k-b-1.rc").write_text("1\n")
    ev = collect_evidence(CaptureHost(gone))
    assert [log.source for log in ev.kernel_logs] == ["journalctl-k"]
    why = ev.unknown["kernel_log_previous_boot"]
    assert why.kind == "absent" and "No such boot ID" in why.text

    syslog = make_capture(tmp_path / "syslog", {"tail-syslog": lines, "journalctl-k-b-1": lines})
    ev = collect_evidence(CaptureHost(syslog))
    assert [log.source for log in ev.kernel_logs] == ["tail-syslog"]  # spans boots: not read twice


@pytest.mark.parametrize(
    "name,kind,ports,down",
    [
        ("ibstat_nccl-tests-issue128_2x-cx6-ib_cx4lx-eth.txt", "ibstat", 3, "fail"),
        ("ibstatus_nccl-issue1412_3x-hdr-ib_1x-40g.txt", "ibstatus", 4, "pass"),
        ("ibv_devinfo_heioy-books_2x-connectx3.txt", "ibv_devinfo", 4, "fail"),
        # interfaces and their netdev state only: no port state to judge, so no finding, not a pass
        ("ibdev2netdev_imbue-cluster-health-issue4_8x-cx7-ib_4x-cx6-eth.txt", "ibdev2netdev", 12, None),
    ],
)
def test_rdma_listings_are_evidence_files_too(name, kind, ports, down):
    """ibstat, ibstatus, ibv_devinfo and ibdev2netdev pasted into a file: `doctor --evidence` reads them into the
    same facts a capture gives, and the port rules judge them the same (see the role goldens)."""
    from gpuwise.facts.evidence import detect_kinds
    from gpuwise.facts.rdma import rdma_format

    path = Path(__file__).parents[1] / "fixtures" / "evidence" / "roles" / "hosts" / name
    text = path.read_text()
    assert detect_kinds(text) == ["rdma"] and rdma_format(text) == kind
    facts = Facts()
    read_evidence([path], facts)
    assert sum(len(d.ports) for d in facts.network.rdma_devices) == ports
    assert facts.network.rdma_source == f"{kind} ({name})"
    found = run_rules(facts, None, "onprem", [registry()["net.rdma_port_down"]])
    assert [f.status for f in found] == ([down] if down else [])


def test_an_ibdev2netdev_file_adds_netdevs_to_the_ports_an_ibstat_file_gave(tmp_path):
    ibstat = tmp_path / "ibstat.txt"
    ibstat.write_text(
        "CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Active\n\t\tLink layer: InfiniBand\n"
    )
    netdev = tmp_path / "ibdev2netdev.txt"
    netdev.write_text("mlx5_0 port 1 ==> ibp26s0 (Down)\n")  # synthetic, in the tool's format
    for order in ([ibstat, netdev], [netdev, ibstat]):
        facts = Facts()
        read_evidence(order, facts)
        [port] = facts.network.rdma_devices[0].ports
        assert (port.state, port.netdev, port.netdev_state) == ("ACTIVE", "ibp26s0", "Down"), order
