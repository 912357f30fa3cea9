"""The fleet directory: one folder per node, however the results were collected (Slurm, Ansible, by hand).

    DIR/<node>/capture.tar.gz   or  DIR/<node>/capture/   `gpuwise capture -o ...` (required)
    DIR/<node>/bench.json                                 `gpuwise bench --save ...` (optional)
    DIR/<node>/doctor.json                                `gpuwise doctor --json ...` (optional; without
                                                          it the doctor rules run on the capture)
    DIR/collective.json                                   the multi-node collective (optional, rank 0 of
                                                          `python -m gpuwise.bench.collective --json`)
    DIR/links.json                                        the pairwise link test (optional,
                                                          `python -m gpuwise.fleet.linktest --json`)

Folders whose names start with "." or "_" are skipped (a node still being written is `.partial-<node>`).
A node that cannot be read is listed with its problem; it never sinks the report (but a report where
no node could be read is no report: analyze.py says so, exit 3).

Every file here comes from the nodes, so it is read like a capture: regular files only (a FIFO named
doctor.json would block the report forever), within datafiles' size cap, and no link may lead out of
the fleet folder (a node folder or file that is a symlink to /etc is refused, not read).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from gpuwise.advise.finding import Finding
from gpuwise.datafiles import read_input_bytes, shown_name
from gpuwise.documents.bench import BenchReport
from gpuwise.documents.doctor import DoctorReport
from gpuwise.documents.ids import REPORT_SCHEMA
from gpuwise.documents.load import DocumentError, read_document
from gpuwise.errors import DataValidationError, GpuwiseError, UserInputError
from gpuwise.facts.models import Facts
from gpuwise.fleet.model import NodeStatus
from gpuwise.i18n import N_, clipped, joined, msg

LAYOUT_FIX = N_(
    "point at a folder with one sub-folder per node, each holding capture.tar.gz (or capture/) "
    "and optionally bench.json and doctor.json, e.g. the --out folder of `gpuwise fleet run`"
)


@dataclass
class NodeResult:
    name: str
    status: NodeStatus
    facts: Facts | None = None
    bench: BenchReport | None = None
    findings: list[Finding] = field(default_factory=list)


def node_dirs(root: Path) -> list[Path]:
    """The node folders of a fleet directory, sorted by name; UserInputError when there are none.
    A symlink among them is kept (and refused by load_node when it leads out of the folder)."""
    root = Path(root).expanduser()
    if not root.is_dir():
        raise UserInputError(
            msg("fleet directory {root} does not exist or is not a folder").format(root=shown_name(root)),
            msg(LAYOUT_FIX),
        )
    dirs = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
    if not dirs:
        raise UserInputError(
            msg("fleet directory {root} has no node folders").format(root=shown_name(root)), msg(LAYOUT_FIX)
        )
    return dirs


class Refused(Exception):
    """A fleet file that is not read: a FIFO, device or socket, or a link out of the fleet folder."""


def _inside(root: Path, path: Path) -> bool:
    target = path.resolve()
    return target == root or root in target.parents


def fleet_entry(root: Path, path: Path, folder: bool = False) -> Path | None:
    """`path` when it exists as a regular file (a folder with `folder`) inside `root` after resolving
    links; None when it does not exist; Refused (with the reason, in words) when it is anything else."""
    if not os.path.lexists(path):
        return None
    root = root.resolve()
    if not _inside(root, path):
        raise Refused(
            msg("{name} is a symlink that leads outside the fleet folder ({target})").format(
                name=path.name, target=shown_name(path.resolve())
            )
        )
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise Refused(
            msg("{name}: {error} (a broken link?)").format(name=path.name, error=exc.strerror or exc)
        ) from None
    if folder and stat.S_ISDIR(mode):
        return path
    if stat.S_ISREG(mode):
        return None if folder else path
    if stat.S_ISDIR(mode):
        raise Refused(msg("{name} is a folder, not a file").format(name=path.name))
    raise Refused(
        msg("{name} is not a regular file (a FIFO, socket or device); it was not read").format(name=path.name)
    )


def capture_path(node_dir: Path) -> Path | None:
    """DIR/<node>/capture.tar.gz (a regular file) or DIR/<node>/capture/ (a folder); Refused otherwise."""
    root = node_dir.parent
    tarball = fleet_entry(root, node_dir / "capture.tar.gz")
    if tarball is not None:
        return tarball
    if os.path.lexists(node_dir / "capture"):
        found = fleet_entry(root, node_dir / "capture", folder=True)
        if found is None:
            raise Refused(msg("capture is a file, not a folder (expected capture.tar.gz or capture/)"))
        return found
    return None


def load_node(node_dir: Path, run_rules: bool = True) -> NodeResult:
    """Read one node's capture, bench and doctor results; every problem is recorded, none is raised."""
    status = NodeStatus(node=node_dir.name)
    result = NodeResult(node_dir.name, status)
    root = node_dir.parent
    if not _inside(root.resolve(), node_dir):
        status.problems.append(
            msg("the node folder is a symlink that leads outside the fleet folder ({target})").format(
                target=shown_name(node_dir.resolve())
            )
        )
        return result
    try:
        _read_node(node_dir, result, run_rules)
    except Refused as exc:  # one refused file ends this node's reading, not the report
        status.problems.append(str(exc))
    return result


def _read_node(node_dir: Path, result: NodeResult, run_rules: bool) -> None:
    from gpuwise.capture.host import CaptureHost
    from gpuwise.facts.collect import collect_facts

    root, status = node_dir.parent, result.status
    cap = capture_path(node_dir)
    if cap is None:
        status.problems.append(msg("no capture.tar.gz or capture/ folder"))
    else:
        try:
            result.facts = collect_facts(CaptureHost(cap))
            status.capture, status.hostname = True, result.facts.meta.hostname
        except GpuwiseError as exc:
            status.problems.append(exc.message)
    bench_file = fleet_entry(root, node_dir / "bench.json")
    if bench_file is not None:
        from gpuwise.bench.report_file import read_bench_report

        try:
            result.bench = read_bench_report(bench_file, "bench.json")
            status.bench = True
        except GpuwiseError as exc:
            status.problems.append(exc.message)
    else:
        log = fleet_entry(root, node_dir / "bench.log")
        if log is not None:  # `fleet run` ran the benchmarks and they wrote nothing
            status.problems.append(msg("no bench.json; bench.log ends: {line}").format(line=_last_line(log)))
    doctor_file = fleet_entry(root, node_dir / "doctor.json")
    if doctor_file is not None:
        try:
            result.findings = _read_doctor(doctor_file)
            status.findings_from = "doctor.json"
        except DataValidationError as exc:
            status.problems.append(msg("doctor.json: {error}").format(error=clipped(exc.reason, 200)))
    if status.findings_from == "none" and result.facts is not None and run_rules:
        from gpuwise.advise.engine import run_rules as run

        result.findings = run(result.facts, result.bench, result.facts.platform.environment or "unknown")
        status.findings_from = "rules"


LOG_TAIL_BYTES = 64 * 1024  # the end of bench.log says why the benchmarks wrote nothing


def _last_line(path: Path) -> str:
    try:
        text = read_input_bytes(path, N_("bench log"), tail=LOG_TAIL_BYTES).decode("utf-8", "replace")
    except DataValidationError as exc:
        return msg("(unreadable: {error})").format(error=exc.reason)
    lines = [x for x in text.splitlines() if x.strip()]
    return lines[-1][:300] if lines else msg("(empty)")


def _read_doctor(path: Path) -> list[Finding]:
    """A node's findings from its doctor.json, validated with the doctor document's model and each
    finding with the model doctor wrote it from (DocumentError naming the first bad field)."""
    from pydantic import ValidationError

    report = read_document(path, DoctorReport, REPORT_SCHEMA, fix=N_(DOCTOR_FIX), kind=N_("doctor report"))
    try:
        return [Finding.model_validate(f) for f in report.findings]
    except ValidationError as exc:
        first = exc.errors()[0]
        where = joined(".", (str(part) for part in ("findings", *first["loc"])))
        raise DocumentError(
            msg("not a valid {schema} document: field {where}: {msg}").format(
                schema=REPORT_SCHEMA, where=where, msg=first["msg"]
            ),
            msg(DOCTOR_FIX),
            path=str(path),
        ) from None


DOCTOR_FIX = N_("rerun `gpuwise doctor --format json -o doctor.json` on the node (`gpuwise fleet run` does)")


def read_json_report(path: Path, problems: list[str]) -> BenchReport | None:
    """A fleet-wide bench file (collective.json); a problem is noted, not raised."""
    try:
        if fleet_entry(path.parent, path) is None:
            return None
    except Refused as exc:
        problems.append(str(exc))
        return None
    from gpuwise.bench.report_file import read_bench_report

    try:
        return read_bench_report(path, path.name)
    except GpuwiseError as exc:
        problems.append(exc.message)
        return None
