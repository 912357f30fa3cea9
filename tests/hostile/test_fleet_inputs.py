"""Hostile fleet folders and health checks (issue 28.5, 24.6), through the real CLI with bounded cost.

A fleet folder is assembled from files the nodes wrote, so everything in it is read like a capture:
a FIFO never blocks the report, a link out of the folder is not followed, a huge tar header stops at
its cap, a folder where no node could be read is exit 3 (not "no node differs"), and a health check
of another node's capture never drains this node.
"""

from __future__ import annotations

import json
import os
import stat

import pytest

from gpuwise.errors import EXIT_COULD_NOT_RUN, EXIT_OK, EXIT_WARNINGS
from tests.hostile import builders as b


def two_nodes(root):
    """A fleet of two identical nodes (the same real capture): nothing differs."""
    for name in ("node01", "node02"):
        b.capture_copy(root / name / "capture")
    return root


@pytest.mark.parametrize(
    "where", ["links.json", "collective.json", "node01/doctor.json", "node01/bench.log", "node01/bench.json"]
)
def test_a_fifo_in_the_fleet_folder_never_blocks(sandbox, where):
    fleet = two_nodes(sandbox.work / "fleet")
    b.fifo(fleet / where)
    sandbox.freeze_inputs()
    out = sandbox.run("fleet", "report", "fleet", "--no-rules", "--no-history")
    out.check(EXIT_OK, "not a regular file")


def test_a_doctor_json_linked_out_of_the_folder_is_not_read(sandbox):
    fleet = two_nodes(sandbox.work / "fleet")
    (fleet / "node01/doctor.json").symlink_to("/etc/passwd")
    sandbox.freeze_inputs()
    out = sandbox.run("fleet", "report", "fleet", "--no-rules", "--no-history", "--json")
    out.check(EXIT_OK)
    node = next(n for n in json.loads(out.stdout)["nodes"] if n["node"] == "node01")
    assert any("leads outside the fleet folder" in p for p in node["problems"]), node
    assert "root:" not in out.stdout  # nothing of /etc/passwd


def test_a_node_folder_linked_out_of_the_fleet_folder_is_refused(sandbox):
    fleet = two_nodes(sandbox.work / "fleet")
    outside = b.capture_copy(sandbox.work / "elsewhere" / "capture").parent
    (fleet / "node03").symlink_to(outside)
    sandbox.freeze_inputs()
    out = sandbox.run("fleet", "report", "fleet", "--no-rules", "--no-history", "--json")
    out.check(EXIT_OK)
    node = next(n for n in json.loads(out.stdout)["nodes"] if n["node"] == "node03")
    assert not node["capture"] and "leads outside the fleet folder" in node["problems"][0], node


def test_a_folder_where_no_node_could_be_read_is_not_green(sandbox):
    """Issue 24: 16 of 16 folders without a capture said 'no node differs from its peers', exit 0."""
    for i in range(1, 17):
        (sandbox.work / "fleet" / f"node{i:02d}").mkdir(parents=True)
    (sandbox.work / "fleet/node16/capture.tar.gz").write_bytes(b"not a tarball")
    sandbox.freeze_inputs()
    out = sandbox.run("fleet", "report", "fleet", "--no-history")
    out.check(
        EXIT_COULD_NOT_RUN, "no node could be read (16 of 16", "no capture.tar.gz or capture/ folder (15"
    )
    assert "no node differs" not in out.stdout + out.stderr


def test_a_capture_with_a_160_mib_pax_header_stops_at_the_header_cap(sandbox):
    """Issue 28.5: a 160 KB node capture with a 160 MiB PAX `path` cost 72 s, 2.78 GB and 173 MB of output."""
    fleet = two_nodes(sandbox.work / "fleet")
    (fleet / "node03").mkdir()
    b.pax_path_bomb_tar(fleet / "node03/capture.tar.gz")
    assert (fleet / "node03/capture.tar.gz").stat().st_size < 1024 * 1024
    sandbox.freeze_inputs()
    out = sandbox.run("fleet", "report", "fleet", "--no-rules", "--no-history")
    out.check(EXIT_OK, "a tar header record (PAX or GNU long name) of 167,772,")
    assert len(out.stdout) + len(out.stderr) < 20_000
    assert "a" * 200 not in out.stdout


def test_a_huge_member_name_is_echoed_cut(sandbox):
    """A PAX path under the header cap (60 KiB) but on a link member: the message shows its start only."""
    import io
    import tarfile

    path = sandbox.work / "c.tar.gz"
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("cap/" + "n" * 60_000)
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/shadow"
        tar.addfile(info, io.BytesIO())
    sandbox.freeze_inputs()
    out = sandbox.run("probe", "--from", "c.tar.gz")
    out.check(EXIT_COULD_NOT_RUN, "(60,004 characters)")
    assert len(out.stdout) + len(out.stderr) < 5_000


def fake_scontrol(sandbox):
    """An `scontrol` on PATH that records its arguments instead of draining anything."""
    bin_dir = sandbox.root / "bin"
    bin_dir.mkdir()
    calls = sandbox.root / "scontrol.calls"
    script = bin_dir / "scontrol"
    script.write_text(f'#!/bin/sh\necho "$@" >> {calls}\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return sandbox.env(PATH=f"{bin_dir}:{os.environ['PATH']}"), calls


def test_healthcheck_drain_of_another_nodes_capture_is_refused(sandbox):
    """Issue 28.5: `--from <node07's capture> --drain` drained *this* machine."""
    b.capture_copy(sandbox.work / "cap")  # captured on host-1
    sandbox.freeze_inputs()
    env, calls = fake_scontrol(sandbox)
    env["SLURMD_NODENAME"] = "node07"
    # --timeout 30: the default 4 s can run out on a loaded machine, and the node would then be unknown
    out = sandbox.run(
        "fleet", "healthcheck", "--from", "cap", "--expect", "gpus=8", "--drain", "--timeout", "30", env=env
    )
    out.check(EXIT_COULD_NOT_RUN, "the capture is of node host-1, not of this node (node07)")
    assert not calls.exists(), calls.read_text()


def test_healthcheck_drain_of_this_nodes_capture_drains_the_captured_host(sandbox):
    b.capture_copy(sandbox.work / "cap")
    sandbox.freeze_inputs()
    env, calls = fake_scontrol(sandbox)
    env["SLURMD_NODENAME"] = "host-1"
    out = sandbox.run(
        "fleet", "healthcheck", "--from", "cap", "--expect", "gpus=8", "--drain", "--json", "--timeout", "30",
        env=env,
    )  # fmt: skip
    out.check(EXIT_WARNINGS)
    assert json.loads(out.stdout)["drained"] is True
    assert calls.read_text().startswith("update nodename=host-1 state=drain reason=")
