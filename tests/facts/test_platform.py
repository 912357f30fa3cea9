"""Platform facts: virtualization, container, cloud DMI (strings from cloud_dmi.md), cgroups, environment kind."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuwise.capture.host import LiveHost
from gpuwise.facts.platform import cloud_rules, collect_platform, match_cloud
from tests.facts.fake_host import FakeHost, failed, missing

DMI = "/sys/class/dmi/id/"
BARE_CPUINFO = "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse avx2\n\n"
VM_CPUINFO = "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse avx2 hypervisor\n\n"


def _dmi(**fields: str) -> dict[str, str]:
    return {DMI + k: v + "\n" for k, v in fields.items()}


def _none_virt() -> dict:
    return {"systemd-detect-virt": failed("systemd-detect-virt", 1, stdout="none\n")}


@pytest.mark.parametrize(
    ("dmi", "provider", "instance_type"),
    [
        # Recorded dmidecode values quoted in cloud_dmi.md (insights-core fixtures).
        (
            dict(sys_vendor="Alibaba Cloud", product_name="Alibaba Cloud ECS", bios_vendor="SeaBIOS"),
            "alibaba",
            None,
        ),
        (
            dict(
                sys_vendor="Xen",
                product_name="HVM domU",
                product_version="4.2.amazon",
                bios_version="4.2.amazon",
            ),
            "aws",
            None,
        ),
        # Rule strings from cloud_dmi.md (cloud-init, systemd); AWS Nitro puts the instance type in product_name.
        (
            dict(sys_vendor="Amazon EC2", product_name="p4d.24xlarge", bios_vendor="Amazon EC2"),
            "aws",
            "p4d.24xlarge",
        ),
        (dict(sys_vendor="Amazon EC2", product_name="Not Specified"), "aws", None),
        (
            dict(chassis_asset_tag="7783-7084-3265-9085-8269-3286-77", sys_vendor="Microsoft Corporation"),
            "azure",
            None,
        ),
        (dict(product_name="Google Compute Engine", bios_vendor="Google"), "gcp", None),
        (dict(chassis_asset_tag="OracleCloud.com"), "oracle", None),
        (dict(chassis_asset_tag="HUAWEICLOUD"), "huawei", None),
        (dict(product_name="OpenStack Nova"), "openstack", None),
        (dict(sys_vendor="Tencent Cloud"), "tencent", None),
    ],
)
def test_cloud_from_dmi(dmi, provider, instance_type):
    p = collect_platform(FakeHost(files={**_dmi(**dmi), "/proc/cpuinfo": VM_CPUINFO}))
    assert (p.cloud_provider, p.instance_type, p.environment) == (provider, instance_type, "cloud")
    assert "DMI" in p.environment_reason
    if instance_type is None:
        assert "instance_type" in p.unknown


def test_hyper_v_strings_are_weak_azure_evidence():
    p = collect_platform(
        FakeHost(files=_dmi(sys_vendor="Microsoft Corporation", product_name="Virtual Machine"))
    )
    assert p.cloud_provider == "azure" and "weak evidence" in p.environment_reason


@pytest.mark.parametrize(
    "dmi",
    [
        # Recorded bare-metal GPU servers quoted in cloud_dmi.md (gengwg/cheatsheets, prometheus/procfs).
        dict(
            sys_vendor="NVIDIA",
            product_name="DGXA100 920-23687-2531-001",
            chassis_asset_tag="00000000000000000000000000000000",
        ),
        dict(sys_vendor="Dell Inc.", product_name="PowerEdge R6515", bios_vendor="Dell Inc."),
    ],
)
def test_bare_metal_is_onprem(dmi):
    p = collect_platform(
        FakeHost(files={**_dmi(**dmi), "/proc/cpuinfo": BARE_CPUINFO}, commands=_none_virt())
    )
    assert (p.virtualization, p.cloud_provider, p.environment) == ("none", None, "onprem")
    assert (
        dmi["sys_vendor"] in p.environment_reason
        and "systemd-detect-virt says 'none'" in p.environment_reason
    )


def test_bare_metal_from_cpuinfo_alone():
    p = collect_platform(
        FakeHost(files={"/proc/cpuinfo": BARE_CPUINFO}, commands={"systemd-detect-virt": missing("x")})
    )
    assert p.virtualization == "none" and p.environment == "onprem"
    assert "no hypervisor flag" in p.environment_reason


def test_microvm_in_docker_like_this_machine():
    """systemd-detect-virt answers 'docker' (containers first); the VM comes from lscpu's hypervisor vendor."""
    lscpu = "Architecture:  x86_64\nCPU(s):  2\nHypervisor vendor:  KVM\nVirtualization type:  full\n"
    host = FakeHost(
        files={"/.dockerenv": "", "/proc/cpuinfo": VM_CPUINFO, "/proc/1/cgroup": "0::/\n"},
        commands={"systemd-detect-virt": "docker\n", "systemd-detect-virt-c": "docker\n", "lscpu": lscpu},
    )
    p = collect_platform(host)
    assert (p.virtualization, p.container, p.cloud_provider, p.environment) == (
        "kvm",
        "docker",
        None,
        "cloud",
    )
    assert p.environment_reason.startswith("kvm guest (lscpu hypervisor vendor 'KVM')")
    assert "not reachable from inside a VM" in p.environment_reason


def test_vm_flag_without_vendor_and_explicit_vm_probe():
    p = collect_platform(FakeHost(files={"/proc/cpuinfo": VM_CPUINFO}))
    assert p.virtualization == "vm-other" and p.environment == "cloud"
    host = FakeHost(files={"/proc/cpuinfo": VM_CPUINFO}, commands={"systemd-detect-virt-vm": "microsoft\n"})
    assert collect_platform(host).virtualization == "microsoft"


def test_nothing_known_is_unknown():
    p = collect_platform(FakeHost())
    assert (p.virtualization, p.container, p.environment) == (None, None, "unknown")
    assert p.environment_reason.startswith("virtualization unknown")
    assert "virtualization" in p.unknown and "container" in p.unknown


def test_containers():
    kube = "12:memory:/kubepods/burstable/pod1234/abcd\n0::/\n"
    assert collect_platform(FakeHost(files={"/proc/1/cgroup": kube})).container == "kubernetes"
    assert collect_platform(FakeHost(files={"/run/.containerenv": ""})).container == "podman"
    none = {"systemd-detect-virt-c": failed("systemd-detect-virt-c", 1, stdout="none\n")}
    assert collect_platform(FakeHost(commands=none)).container == "none"


@pytest.mark.parametrize(
    ("files", "cpu", "mem", "cpu_reason", "mem_reason"),
    [
        (
            {"/sys/fs/cgroup/cpu.max": "200000 100000\n", "/sys/fs/cgroup/memory.max": "8589934592\n"},
            2.0,
            8589934592,
            None,
            None,
        ),
        (
            {"/sys/fs/cgroup/cpu.max": "max 100000\n", "/sys/fs/cgroup/memory.max": "max\n"},
            None,
            None,
            "no limit",
            "no limit",
        ),
        (
            {
                "/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1\n",
                "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n",
                "/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
            },
            None,
            None,
            "no limit",
            "no limit",
        ),
        (
            {
                "/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "400000\n",
                "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n",
                "/sys/fs/cgroup/memory/memory.limit_in_bytes": "17179869184\n",
            },
            4.0,
            17179869184,
            None,
            None,
        ),
    ],
)
def test_cgroup_limits(files, cpu, mem, cpu_reason, mem_reason):
    p = collect_platform(FakeHost(files=files))
    assert (p.cgroup_cpu_limit, p.cgroup_memory_limit_bytes) == (cpu, mem)
    if cpu_reason:
        assert p.unknown["cgroup_cpu_limit"].text.startswith(cpu_reason)
    if mem_reason:
        assert p.unknown["cgroup_memory_limit_bytes"].text.startswith(mem_reason)


def test_every_cited_pattern_is_in_cloud_dmi_md(real):
    """Provenance: each literal pattern of a row citing cloud_dmi.md appears in that file."""
    md = (real / "cloud_dmi.md").read_text()
    for rule in cloud_rules():
        if rule.source.startswith("cloud_dmi.md"):
            for field, pattern in rule.conditions:
                literal = pattern.replace("*", "")
                assert literal in md, f"{rule.provider}: {field}={pattern} not in cloud_dmi.md"


def test_rules_are_well_formed():
    rules = cloud_rules()
    assert len(rules) >= 20
    assert all(r.conditions and r.source and r.confidence in ("strong", "weak") for r in rules)
    assert match_cloud({}) is None


def test_live_machine():
    """The dev machine is a KVM (Firecracker) microVM with no DMI, running a Docker-like container."""
    p = collect_platform(LiveHost())
    assert p.virtualization == "kvm"
    assert p.environment == "cloud" and "kvm guest" in p.environment_reason
    assert p.container == "docker"


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=200))
def test_garbage_never_raises(text):
    files = {DMI + f: text for f in ("sys_vendor", "product_name", "chassis_asset_tag")}
    files.update(
        {
            p: text
            for p in (
                "/proc/cpuinfo",
                "/proc/1/cgroup",
                "/sys/fs/cgroup/cpu.max",
                "/sys/fs/cgroup/memory.max",
            )
        }
    )
    cmds = dict.fromkeys(("systemd-detect-virt", "systemd-detect-virt-c", "lscpu"), text)
    p = collect_platform(FakeHost(files=files, commands=cmds))
    assert p.environment in ("cloud", "onprem", "unknown") and p.environment_reason
