"""Evidence from the node's own tools and logs (DCGM diagnostics, Fabric Manager, the kernel log; RDMA port
listings given as files), read from a
Host (the commands and files `gpuwise capture` records) or from files a user gives `doctor --evidence`.

A file's kind is detected from its content (`detect_kind`), so people need one option whatever they paste.
"""

from __future__ import annotations

from gpuwise.capture.host import Host, absent_source
from gpuwise.facts.dcgm_diag import looks_like_dcgm_diag, parse_dcgm_diag
from gpuwise.facts.dcgm_nvlink import looks_like_dcgm_nvlink, parse_dcgm_nvlink
from gpuwise.facts.fabric_manager import looks_like_fabric_manager, parse_fabric_manager
from gpuwise.facts.kernel_log import looks_like_kernel_log, parse_kernel_log
from gpuwise.facts.models import Evidence, Facts, Unknown
from gpuwise.facts.rdma import rdma_format, read_rdma_text
from gpuwise.facts.sourcing import command_reason
from gpuwise.facts.xid import parse_xid_lines
from gpuwise.i18n import joined, msg

# The kernel log, best source first: one of them is read (reading two would count each event twice).
KERNEL_LOG_COMMANDS = ("journalctl-k", "dmesg", "tail-kern-log", "tail-syslog")
# the previous boot's kernel log (where a crashed node logged its last events), read besides this boot's
# journal; the syslog files already span boots, so it is not added to them
PREVIOUS_BOOT_COMMAND = "journalctl-k-b-1"
FABRIC_MANAGER_COMMANDS = ("tail-fabricmanager-log", "journalctl-fabricmanager")
DCGM_DIAG_COMMAND = "dcgmi-diag-r1-j"
DCGM_NVLINK_COMMAND = "dcgmi-nvlink-link-status"


def detect_kinds(text: str) -> list[str]:
    """The kinds a file's text holds, of 'dcgm-diag', 'dcgm-nvlink', 'fabric-manager', 'kernel-log' (a whole journal can
    hold Fabric Manager and kernel lines both) and 'rdma' (ibv_devinfo, ibstat, ibstatus or ibdev2netdev
    output); empty when none."""
    if looks_like_dcgm_nvlink(text):
        return ["dcgm-nvlink"]
    checks = (
        ("dcgm-diag", looks_like_dcgm_diag),
        ("fabric-manager", looks_like_fabric_manager),
        ("kernel-log", looks_like_kernel_log),
    )
    kinds = [kind for kind, looks in checks if looks(text)]
    if kinds[:1] == ["dcgm-diag"]:
        return kinds[:1]
    return kinds or (["rdma"] if rdma_format(text) else [])


def add_file(facts: Facts, text: str, kind: str, source: str) -> None:
    """Read one evidence file of `kind` into facts (ValueError when it holds nothing of that kind)."""
    ev = facts.evidence
    if kind == "dcgm-diag":
        ev.dcgm_diag = [*(ev.dcgm_diag or []), parse_dcgm_diag(text, source)]
        ev.unknown.pop("dcgm_diag", None)
    elif kind == "dcgm-nvlink":
        ev.dcgm_nvlink = [*(ev.dcgm_nvlink or []), parse_dcgm_nvlink(text, source)]
        ev.unknown.pop("dcgm_nvlink", None)
    elif kind == "fabric-manager":
        ev.fabric_manager = [*(ev.fabric_manager or []), parse_fabric_manager(text, source)]
        ev.unknown.pop("fabric_manager", None)
    elif kind == "kernel-log":
        log = parse_kernel_log(text, source)
        xids = parse_xid_lines(text)
        if not log.events and not xids and not log.lines:
            raise ValueError("no kernel log lines in it")
        ev.kernel_logs = [*(ev.kernel_logs or []), log]
        ev.unknown.pop("kernel_logs", None)
        if xids or facts.kernel.xid_events is not None:
            facts.kernel.xid_events = [*(facts.kernel.xid_events or []), *xids]
            facts.kernel.unknown.pop("xid_events", None)
    elif kind == "rdma":
        net = facts.network
        net.rdma_devices = read_rdma_text(text, net.rdma_devices)
        net.rdma_source = net.rdma_source or f"{rdma_format(text)} ({source})"
        net.unknown.pop("rdma_devices", None)
    else:
        raise ValueError(f"unknown evidence kind {kind!r}")


def collect_evidence(host: Host) -> Evidence:
    ev = Evidence()
    _dcgm(ev, host)
    _dcgm_nvlink(ev, host)
    reasons: list[Unknown] = []
    for cid in FABRIC_MANAGER_COMMANDS:
        text, reason = _text(host, cid)
        if text is None:
            reasons.append(reason)
            continue
        ev.fabric_manager = [*(ev.fabric_manager or []), parse_fabric_manager(text, cid)]
    if ev.fabric_manager is None:
        ev.why(
            "fabric_manager",
            _least(reasons, msg("no Fabric Manager log (not installed, or no NVSwitch system)")),
        )
    reasons = []
    for cid in KERNEL_LOG_COMMANDS:
        text, reason = _text(host, cid)
        if text is None:
            reasons.append(reason)
            continue
        ev.kernel_logs = [parse_kernel_log(text, cid)]
        if cid == "journalctl-k":
            previous, reason = _text(host, PREVIOUS_BOOT_COMMAND)
            if previous is not None:
                ev.kernel_logs.append(parse_kernel_log(previous, PREVIOUS_BOOT_COMMAND))
            else:
                ev.why("kernel_log_previous_boot", reason)
        break
    if ev.kernel_logs is None:
        ev.why("kernel_logs", _least(reasons, msg("no kernel log could be read")))
    return ev


def _dcgm(ev: Evidence, host: Host) -> None:
    version = host.run("dcgmi-version")
    if version is not None and version.status == "missing" and DCGM_DIAG_COMMAND not in host.executed():
        # the same reason a capture of this machine records, so live and replayed facts agree
        ev.why("dcgm_diag", command_reason(DCGM_DIAG_COMMAND, version))
        return
    if host.meta().source == "live" and DCGM_DIAG_COMMAND not in host.executed():
        ev.why(
            "dcgm_diag",
            msg(
                "not run by a live doctor (dcgmi diag loads the GPUs for up to a minute): `gpuwise capture` "
                "records it, or pass its output with --evidence"
            ),
            kind="not_captured",
        )
        return
    text, reason = _text(host, DCGM_DIAG_COMMAND)
    if text is None:
        ev.why("dcgm_diag", reason)
        return
    try:
        ev.dcgm_diag = [parse_dcgm_diag(text, DCGM_DIAG_COMMAND)]
    except ValueError as exc:
        ev.why(
            "dcgm_diag", msg("dcgmi diag output not readable: {error}").format(error=exc), kind="unparsable"
        )


def _dcgm_nvlink(ev: Evidence, host: Host) -> None:
    """`dcgmi nvlink --link-status` (seconds, no load on the GPUs): read live and in a capture."""
    version = host.run("dcgmi-version")
    if version is not None and version.status == "missing":
        ev.why("dcgm_nvlink", command_reason(DCGM_NVLINK_COMMAND, version))
        return
    text, reason = _text(host, DCGM_NVLINK_COMMAND)
    if text is None:
        ev.why("dcgm_nvlink", reason)
        return
    try:
        ev.dcgm_nvlink = [parse_dcgm_nvlink(text, DCGM_NVLINK_COMMAND)]
    except ValueError as exc:
        ev.why(
            "dcgm_nvlink",
            msg("dcgmi nvlink output not readable: {error}").format(error=exc),
            kind="unparsable",
        )


def _text(host: Host, command_id: str) -> tuple[str | None, Unknown]:
    """The command's stdout, or why not; `tail` of a missing file is an absent file, not a failure."""
    result = host.run(command_id)
    if result is not None and result.status == "ok" and result.stdout.strip().startswith("-- No entries --"):
        detail = (result.stderr or "").strip().splitlines()[:1]
        text = msg("`{command}`: no entries in the journal").format(command=command_id)
        return None, Unknown(kind="absent", text=text + (f" ({detail[0][:120]})" if detail else ""))
    if result is not None and result.status == "ok" and result.rc == 0 and result.stdout.strip():
        return result.stdout, Unknown(kind="absent", text="")
    if (why := absent_source(result)) is not None:  # a missing file, no such boot in the journal
        return None, Unknown(kind="absent", text=why[:160])
    if result is not None and result.status == "ok" and result.rc == 0:
        return None, Unknown(
            kind="absent", text=msg("`{command}` printed nothing").format(command=command_id)
        )
    if (
        command_id == DCGM_DIAG_COMMAND
        and result is not None
        and result.status == "ok"
        and result.stdout.strip()
    ):
        return result.stdout, Unknown(kind="absent", text="")  # dcgmi diag exits non-zero when a test fails
    return None, command_reason(command_id, result) or Unknown(kind="failed", text=command_id)


def _least(reasons: list[Unknown], text: str) -> Unknown:
    """One reason for several sources: the least conclusive kind, with each source's own text."""
    from gpuwise.facts.models import combined

    details = joined("; ", (r.text for r in reasons if r.text))
    return combined(reasons, f"{text} ({details})" if details else text)
