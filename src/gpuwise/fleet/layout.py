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
A node that cannot be read is listed with its problem; it never sinks the report.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from gpuwise.advise.finding import Finding
from gpuwise.bench.models import BenchReport
from gpuwise.errors import GpuwiseError, UserInputError
from gpuwise.facts.models import Facts
from gpuwise.fleet.model import NodeStatus
from gpuwise.i18n import N_, _

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
    """The node folders of a fleet directory, sorted by name; UserInputError when there are none."""
    root = Path(root).expanduser()
    if not root.is_dir():
        raise UserInputError(
            _("fleet directory {root} does not exist or is not a folder").format(root=root), _(LAYOUT_FIX)
        )
    dirs = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
    if not dirs:
        raise UserInputError(_("fleet directory {root} has no node folders").format(root=root), _(LAYOUT_FIX))
    return dirs


def capture_path(node_dir: Path) -> Path | None:
    for name in ("capture.tar.gz", "capture"):
        if (node_dir / name).exists():
            return node_dir / name
    return None


def load_node(node_dir: Path, run_rules: bool = True) -> NodeResult:
    """Read one node's capture, bench and doctor results; every problem is recorded, none is raised."""
    from gpuwise.capture.host import CaptureHost
    from gpuwise.facts.collect import collect_facts

    status = NodeStatus(node=node_dir.name)
    result = NodeResult(node_dir.name, status)
    cap = capture_path(node_dir)
    if cap is None:
        status.problems.append(_("no capture.tar.gz or capture/ folder"))
    else:
        try:
            result.facts = collect_facts(CaptureHost(cap))
            status.capture, status.hostname = True, result.facts.meta.hostname
        except GpuwiseError as exc:
            status.problems.append(exc.message)
    bench_file = node_dir / "bench.json"
    if bench_file.exists():
        from gpuwise.bench.report_file import read_bench_report

        try:
            result.bench = read_bench_report(bench_file, "bench.json")
            status.bench = True
        except GpuwiseError as exc:
            status.problems.append(exc.message)
    elif (node_dir / "bench.log").exists():  # `fleet run` ran the benchmarks and they wrote nothing
        status.problems.append(
            _("no bench.json; bench.log ends: {line}").format(line=_last_line(node_dir / "bench.log"))
        )
    doctor_file = node_dir / "doctor.json"
    if doctor_file.exists():
        try:
            result.findings = _read_doctor(doctor_file)
            status.findings_from = "doctor.json"
        except (OSError, ValueError) as exc:
            status.problems.append(
                _("doctor.json: not a {schema} file ({error})").format(
                    schema="gpuwise-report/1", error=str(exc)[:200]
                )
            )
    if status.findings_from == "none" and result.facts is not None and run_rules:
        from gpuwise.advise.engine import run_rules as run

        result.findings = run(result.facts, result.bench, result.facts.platform.environment or "unknown")
        status.findings_from = "rules"
    return result


def _last_line(path: Path) -> str:
    try:
        lines = [x for x in path.read_text(encoding="utf-8", errors="replace").splitlines() if x.strip()]
    except OSError as exc:
        return _("(unreadable: {error})").format(error=exc.strerror or exc)
    return lines[-1][:300] if lines else _("(empty)")


def _read_doctor(path: Path) -> list[Finding]:
    from pydantic import ValidationError

    raw = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(raw, dict) or raw.get("schema") != "gpuwise-report/1":
        raise ValueError(
            _("schema is {found!r}").format(found=raw.get("schema") if isinstance(raw, dict) else None)
        )
    try:
        return [Finding.model_validate(f) for f in raw.get("findings") or []]
    except ValidationError as exc:
        raise ValueError(str(exc.errors()[0]["msg"])) from None


def read_json_report(path: Path, problems: list[str]) -> BenchReport | None:
    """A fleet-wide bench file (collective.json); a problem is noted, not raised."""
    if not path.exists():
        return None
    from gpuwise.bench.report_file import read_bench_report

    try:
        return read_bench_report(path, path.name)
    except GpuwiseError as exc:
        problems.append(exc.message)
        return None
