"""Platform facts: virtualization, container, DMI strings, cloud provider and instance type, cgroup
limits, and the derived environment kind (cloud / onprem / unknown) with its reason."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from functools import lru_cache

from gpuwise.capture.host import Host
from gpuwise.facts.cpu import parse_cpuinfo, parse_lscpu
from gpuwise.facts.models import Platform, Unknown, combined
from gpuwise.facts.sourcing import command_text, file_text, to_int
from gpuwise.i18n import cmsg, joined, msg
from gpuwise.providers import Provider, providers
from gpuwise.registry import Registry

DMI_DIR = "/sys/class/dmi/id"
DMI_FIELDS = (
    "sys_vendor", "product_name", "product_version", "product_serial", "product_uuid", "board_vendor",
    "bios_vendor", "bios_version", "chassis_vendor", "chassis_asset_tag",
)  # fmt: skip
# systemd-detect-virt names for containers; without --vm it reports these before any VM.
CONTAINER_KINDS = frozenset(
    (
        "docker",
        "podman",
        "lxc",
        "lxc-libvirt",
        "systemd-nspawn",
        "openvz",
        "rkt",
        "wsl",
        "proot",
        "pouch",
        "container-other",
    )
)
NO_LIMIT_BYTES = 1 << 60  # cgroup v1 reports "unlimited" as a page-rounded 2^63-1


@dataclass(frozen=True)
class CloudRule:
    provider: str
    label: str
    conditions: tuple[tuple[str, str], ...]
    confidence: str
    instance_type_field: str | None
    instance_type_regex: str | None
    source: str


@lru_cache(maxsize=1)
def _default_cloud_rules() -> tuple[CloudRule, ...]:
    return _rules_of(providers())


def cloud_rules(registry: Registry[Provider] | None = None) -> tuple[CloudRule, ...]:
    """Every provider's DMI rules (gpuwise/providers/, one module per cloud, or those of `registry`), in
    matching order."""
    return _default_cloud_rules() if registry is None else _rules_of(providers(registry))


def _rules_of(found: tuple[Provider, ...]) -> tuple[CloudRule, ...]:
    rules = []
    for provider in found:
        for rule in provider.dmi:
            field, regex = rule.instance_type or (None, None)
            rules.append(
                CloudRule(
                    provider.name,
                    rule.label or provider.label,
                    rule.conditions,
                    rule.confidence,
                    field,
                    regex,
                    rule.source,
                )
            )
    return tuple(rules)


def match_cloud(
    dmi: dict[str, str], registry: Registry[Provider] | None = None
) -> tuple[CloudRule, str] | None:
    """The first rule whose conditions all hold, with the DMI evidence as text."""
    for rule in cloud_rules(registry):
        if rule.conditions and all(
            fnmatch.fnmatchcase(dmi.get(f) or "", pat) and dmi.get(f) for f, pat in rule.conditions
        ):
            evidence = (" " + cmsg("conditions", "and") + " ").join(
                f"{f}={dmi[f]!r}" for f, _pattern in rule.conditions
            )
            return rule, evidence
    return None


def read_dmi(host: Host) -> dict[str, str]:
    out = {}
    for field in DMI_FIELDS:
        text = host.read_file(f"{DMI_DIR}/{field}")
        if text is not None and text.strip():
            out[field] = text.strip()
    return out


def collect_platform(host: Host) -> Platform:
    """Virtualization, container, DMI, cloud provider, cgroup limits and the environment kind."""
    p = Platform()
    dmi = read_dmi(host)
    p.sys_vendor, p.product_name, p.bios_vendor = (
        dmi.get("sys_vendor"),
        dmi.get("product_name"),
        dmi.get("bios_vendor"),
    )
    if not dmi:
        for field in ("sys_vendor", "product_name", "bios_vendor"):
            p.why(
                field,
                msg("no DMI in {dir} (not captured, or a VM without SMBIOS such as Firecracker)").format(
                    dir=DMI_DIR
                ),
                kind="absent",
            )

    p.virtualization, virt_evidence, virt_failures = _virtualization(host)
    if p.virtualization is None:
        p.why("virtualization", combined(virt_failures, virt_evidence))
    p.container, container_evidence, container_failure = _container(host)
    if p.container is None:
        p.why("container", container_failure or container_evidence, kind="unparsable")

    cloud = match_cloud(dmi)
    if cloud:
        rule, evidence = cloud
        p.cloud_provider = rule.provider
        value = dmi.get(rule.instance_type_field or "")
        if value and rule.instance_type_regex and re.match(rule.instance_type_regex, value):
            p.instance_type = value
        else:
            p.why(
                "instance_type",
                msg("DMI does not name the {provider} instance type (try --cloud-metadata)").format(
                    provider=rule.label
                ),
                kind="unparsable",
            )
        weak = (
            " " + msg("(weak evidence; source: {source})").format(source=rule.source)
            if rule.confidence == "weak"
            else ""
        )
        p.environment, p.environment_reason = "cloud", f"{rule.label}: DMI {evidence}{weak}"
    else:
        if dmi:
            p.why("cloud_provider", msg("no cloud provider DMI strings"), kind="not_applicable")
        else:
            p.why("cloud_provider", msg("no DMI strings to match"), kind="absent")
        p.why("instance_type", msg("no cloud provider identified"), kind="not_applicable")
        p.environment, p.environment_reason = _environment(p.virtualization, virt_evidence, dmi)

    _cgroups(p, host)
    return p


def _environment(virt: str | None, evidence: str, dmi: dict[str, str]) -> tuple[str, str]:
    if virt and virt != "none":
        return (
            "cloud",
            msg(
                "{virt} guest ({evidence}): firmware/BIOS are not reachable from inside a VM; treated as "
                "cloud-like"
            ).format(virt=virt, evidence=evidence),
        )
    if virt == "none":
        vendor = (
            f"; DMI {dmi['sys_vendor']!r} {dmi.get('product_name', '')!r}" if dmi.get("sys_vendor") else ""
        )
        return "onprem", msg("bare metal ({evidence}) and no cloud DMI strings").format(
            evidence=evidence
        ) + vendor
    return "unknown", msg("virtualization unknown ({evidence}) and no cloud DMI strings").format(
        evidence=evidence
    )


def _virtualization(host: Host) -> tuple[str | None, str, list[Unknown]]:
    """(kind, evidence, why each source said nothing). Tries systemd-detect-virt --vm, plain systemd-detect-virt (unless it answered
    with a container), lscpu's hypervisor vendor, /sys/hypervisor/type, then the cpuinfo hypervisor flag."""
    reasons: list[str] = []
    failures: list[Unknown] = []
    for command_id in ("systemd-detect-virt-vm", "systemd-detect-virt"):
        text, reason = command_text(host, command_id, allow_rc=(1,))  # exits 1 when it prints "none"
        answer = (text or "").strip().splitlines()[:1]
        if answer and answer[0] not in CONTAINER_KINDS and re.fullmatch(r"[a-z0-9_-]+", answer[0]):
            return answer[0], msg("systemd-detect-virt says {answer!r}").format(answer=answer[0]), failures
        if answer:
            reasons.append(
                msg("systemd-detect-virt reports the container {answer!r}, not the VM").format(
                    answer=answer[0]
                )
            )
            failures.append(Unknown(kind="not_applicable", text=reasons[-1]))
        elif reason:
            failures.append(reason)
            if reason.kind != "not_captured":
                reasons.append(reason.text)
    lscpu_text, _why = command_text(host, "lscpu")
    vendor = parse_lscpu(lscpu_text).get("Hypervisor vendor") if lscpu_text else None
    if vendor:
        return (
            vendor.split()[0].lower(),
            msg("lscpu hypervisor vendor {vendor!r}").format(vendor=vendor),
            failures,
        )
    xen = (host.read_file("/sys/hypervisor/type") or "").strip()
    if xen:
        return xen, msg("/sys/hypervisor/type is {xen!r}").format(xen=xen), failures
    cpuinfo, reason = file_text(host, "/proc/cpuinfo")
    procs = parse_cpuinfo(cpuinfo) if cpuinfo else []
    flags = procs[0].get("flags") if procs else None
    if flags is not None:
        if "hypervisor" in flags.split():
            return (
                "vm-other",
                msg("/proc/cpuinfo has the hypervisor flag (hypervisor not identified)"),
                failures,
            )
        return "none", msg("no hypervisor flag in /proc/cpuinfo"), failures
    failures.append(reason or Unknown(kind="unparsable", text=msg("no x86 flags line in /proc/cpuinfo")))
    reasons.append(failures[-1].text)
    return None, joined("; ", reasons), failures


def _container(host: Host) -> tuple[str | None, str, Unknown | None]:
    """(kind, evidence, why nothing could be told when kind is None)."""
    cgroup = host.read_file("/proc/1/cgroup") or ""
    if "kubepods" in cgroup:
        return "kubernetes", msg("/proc/1/cgroup names kubepods"), None
    text, reason = command_text(host, "systemd-detect-virt-c", allow_rc=(1,))
    answer = (text or "").strip()
    if answer and answer != "none":
        return answer, msg("systemd-detect-virt --container says {answer}").format(answer=repr(answer)), None
    if host.read_file("/.dockerenv") is not None:
        return "docker", msg("/.dockerenv exists"), None
    if host.read_file("/run/.containerenv") is not None:
        return "podman", msg("/run/.containerenv exists"), None
    if re.search(r"/(docker|containerd|lxc|libpod)[/-]", cgroup):
        return re.search(r"/(docker|containerd|lxc|libpod)[/-]", cgroup).group(1), "/proc/1/cgroup", None  # type: ignore[union-attr]
    if answer == "none" or cgroup:
        return (
            "none",
            msg("systemd-detect-virt --container says {answer}").format(answer="'none'")
            if answer
            else msg("no container markers"),
            None,
        )
    return None, reason.text if reason else msg("no container evidence captured"), reason


def _cgroups(p: Platform, host: Host) -> None:
    v2_cpu, v2_mem = host.read_file("/sys/fs/cgroup/cpu.max"), host.read_file("/sys/fs/cgroup/memory.max")
    if v2_cpu is not None or v2_mem is not None:
        fields = (v2_cpu or "").split()
        quota, period = (fields + ["", ""])[:2]
        if quota == "max":
            p.why("cgroup_cpu_limit", msg("no limit (cgroup v2 cpu.max is 'max')"), kind="not_applicable")
        elif to_int(quota) and to_int(period):
            p.cgroup_cpu_limit = round(to_int(quota) / to_int(period), 3)  # type: ignore[operator]
        else:
            p.why(
                "cgroup_cpu_limit",
                msg("{source} unreadable").format(source="cgroup v2 cpu.max"),
                kind="unparsable",
            )
        _memory_limit(p, (v2_mem or "").strip(), "cgroup v2 memory.max")
        return
    quota = to_int(host.read_file("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"))
    period = to_int(host.read_file("/sys/fs/cgroup/cpu/cpu.cfs_period_us"))
    if quota is not None and quota < 0:
        p.why("cgroup_cpu_limit", msg("no limit (cgroup v1 cfs_quota_us is -1)"), kind="not_applicable")
    elif quota and period:
        p.cgroup_cpu_limit = round(quota / period, 3)
    else:
        p.why(
            "cgroup_cpu_limit",
            msg("no cgroup cpu controller files (v2 cpu.max or v1 cpu.cfs_quota_us)"),
            kind="absent",
        )
    mem = host.read_file("/sys/fs/cgroup/memory/memory.limit_in_bytes")
    if mem is None:
        p.why(
            "cgroup_memory_limit_bytes",
            msg("no cgroup memory controller files (v2 memory.max or v1 limit_in_bytes)"),
            kind="absent",
        )
    else:
        _memory_limit(p, mem.strip(), "cgroup v1 memory.limit_in_bytes")


def _memory_limit(p: Platform, value: str, source: str) -> None:
    number = to_int(value)
    if value == "max" or (number is not None and number >= NO_LIMIT_BYTES):
        p.why(
            "cgroup_memory_limit_bytes",
            msg("no limit ({source} is {value})").format(source=source, value=value),
            kind="not_applicable",
        )
    elif number is not None and number > 0:
        p.cgroup_memory_limit_bytes = number
    else:
        p.why(
            "cgroup_memory_limit_bytes", msg("{source} unreadable").format(source=source), kind="unparsable"
        )
