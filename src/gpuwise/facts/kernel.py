"""Kernel and OS facts: release, distro, command line (IOMMU, isolation), THP, sysctls, memlock,
PCIe ACS redirect state on bridges (lspci -vvv), loaded modules and NVIDIA Xid events (dmesg)."""

from __future__ import annotations

import re
import shlex

from gpuwise.capture.host import Host
from gpuwise.facts.models import Kernel
from gpuwise.facts.sourcing import command_text, file_text
from gpuwise.facts.xid import collect_xid
from gpuwise.i18n import joined, msg

# The sysctls that matter for multi-GPU training: socket buffers for NCCL over TCP, writeback, swap,
# and automatic NUMA balancing (which migrates pages under pinned DMA buffers).
SYSCTLS = (
    "net.core.rmem_max",
    "net.core.wmem_max",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "vm.dirty_ratio",
    "vm.swappiness",
    "kernel.numa_balancing",
)

_BDF = re.compile(r"^((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s")


def parse_cmdline(text: str) -> dict[str, str]:
    """Kernel command line -> {param: value}; flags without '=' map to ''. Later repeats win, as in the kernel."""
    try:
        tokens = shlex.split(text)
    except ValueError:
        tokens = text.split()
    out: dict[str, str] = {}
    for tok in tokens:
        if tok == "--":  # what follows is for init, not the kernel
            break
        key, _eq, value = tok.partition("=")
        out[key] = value
    return out


def iommu_mode(params: dict[str, str]) -> str:
    """'off' if any IOMMU is switched off, else 'pt' (passthrough), 'on', or 'default' (not set)."""
    values = {k: params[k].split(",")[0] for k in ("iommu", "intel_iommu", "amd_iommu") if k in params}
    if "off" in values.values():
        return "off"
    if values.get("iommu") == "pt":
        return "pt"
    if "on" in values.values() or "force" in values.values():
        return "on"
    return "default"


def bracketed_choice(text: str) -> str | None:
    """'always [madvise] never' -> 'madvise'."""
    m = re.search(r"\[([^\]]+)\]", text or "")
    return m.group(1).strip() if m else None


def parse_memlock(limits: str) -> tuple[str | None, int | None]:
    """/proc/<pid>/limits 'Max locked memory  8388608  8388608  bytes' -> ('8388608', 8388608) (soft limit)."""
    for line in limits.splitlines():
        if line.startswith("Max locked memory"):
            fields = line[len("Max locked memory") :].split()
            if fields:
                soft = fields[0]
                return soft, int(soft) if soft.isdigit() else None
    return None, None


def acs_redirect_bridges(lspci_text: str) -> list[str]:
    """BDFs whose ACSCtl has ReqRedir+ or CmpltRedir+ in `lspci -vvv` (P2P traffic forced up to the root)."""
    out: list[str] = []
    current: str | None = None
    for line in lspci_text.splitlines():
        m = _BDF.match(line)
        if m:
            current = m.group(1)
            continue
        if (
            current
            and "ACSCtl:" in line
            and re.search(r"\b(ReqRedir|CmpltRedir)\+", line)
            and current not in out
        ):
            out.append(current)
    return out


def collect_kernel(host: Host) -> Kernel:
    """Kernel release, distro, boot parameters, THP, sysctls, memlock limit, ACS and modules."""
    k = Kernel()
    text, reason = file_text(host, "/proc/version")
    m = re.match(r"^Linux version (\S+)", text or "")
    k.release = m.group(1) if m else None
    if k.release is None:
        k.why("release", reason or msg("/proc/version has no 'Linux version'"), kind="unparsable")

    text, reason = file_text(host, "/etc/os-release")
    m = re.search(r"^PRETTY_NAME=(.*)$", text or "", re.MULTILINE)
    k.distro = m.group(1).strip().strip("\"'") or None if m else None
    if k.distro is None:
        k.why("distro", reason or msg("no PRETTY_NAME in /etc/os-release"), kind="unparsable")

    _cmdline(k, host)

    for field, path in (
        ("thp_enabled", "/sys/kernel/mm/transparent_hugepage/enabled"),
        ("thp_defrag", "/sys/kernel/mm/transparent_hugepage/defrag"),
    ):
        text, reason = file_text(host, path)
        setattr(k, field, bracketed_choice(text) if text else None)
        if getattr(k, field) is None:
            k.why(field, reason or msg("no [choice] in {path}").format(path=path), kind="unparsable")

    for name in SYSCTLS:
        text, reason = file_text(host, "/proc/sys/" + name.replace(".", "/"))
        if text is not None and text.strip():
            k.sysctl[name] = joined(" ", text.split())
        else:
            k.why(f"sysctl.{name}", reason or msg("empty"), kind="unparsable")

    text, reason = file_text(host, "/proc/self/limits")
    soft, k.memlock_bytes = parse_memlock(text) if text else (None, None)
    k.memlock_unlimited = (soft == "unlimited") if soft else None
    if soft is None:
        k.why("memlock_unlimited", reason or msg("no 'Max locked memory' line"), kind="unparsable")
        k.why("memlock_bytes", reason or msg("no 'Max locked memory' line"), kind="unparsable")
    elif k.memlock_bytes is None:
        k.why("memlock_bytes", msg("memlock limit is {limit}").format(limit=soft), kind="not_applicable")

    _acs(k, host)

    text, reason = file_text(host, "/proc/modules")
    if text is None:
        k.why("modules", reason)
    else:
        k.modules = sorted({line.split()[0] for line in text.splitlines() if line.split()})
    collect_xid(k, host)
    return k


def _cmdline(k: Kernel, host: Host) -> None:
    text, reason = file_text(host, "/proc/cmdline")
    if text is None:
        for field in ("cmdline", "iommu", "isolcpus", "nohz_full"):
            k.why(field, reason)
        return
    k.cmdline = text.strip()
    params = parse_cmdline(k.cmdline)
    k.iommu = iommu_mode(params)
    for field in ("isolcpus", "nohz_full"):
        value = params.get(field)
        setattr(k, field, value or None)
        if not value:
            k.why(field, msg("not set on the kernel command line"), kind="not_applicable")


def _acs(k: Kernel, host: Host) -> None:
    text, reason = command_text(host, "lspci-vvv")
    if text is None:
        k.why("acs_redirect_bridges", reason)
        return
    bridges = acs_redirect_bridges(text)
    if not bridges and "ACSCtl:" not in text and "<access denied>" in text:
        k.why(
            "acs_redirect_bridges",
            msg("lspci -vvv ran without root: PCIe capabilities show <access denied>"),
            kind="failed",
        )
        return
    k.acs_redirect_bridges = bridges
