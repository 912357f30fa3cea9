"""Kernel and OS rules (layer: kernel): ACS, IOMMU, NUMA balancing, CPU governor, THP, swap, memlock.
Sources: REFERENCE §5 rows
(PCIe ACS, IOMMU mode, NUMA auto-balancing, CPU governor, THP, /dev/shm and memlock)."""

from __future__ import annotations

from gpuwise.advise.controls import CLOUD_KERNEL, provider_owned
from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.finding import Controllable, ExpectedGain
from gpuwise.advise.rules._links import (
    AMD_MI300X,
    GRACE_PLATFORM,
    KERNEL_SYSCTL_VM,
    KERNEL_THP,
    NCCL_ACS,
    NCCL_TROUBLESHOOTING,
)
from gpuwise.advise.rules._util import is_virtual_machine
from gpuwise.advise.rules._util import sentences as _sentences
from gpuwise.i18n import N_, joined, msg


@rule(
    id="kernel.acs_redirect",
    layer="kernel",
    title=N_("PCIe ACS redirects peer-to-peer traffic through the root complex"),
    source=f"NCCL Troubleshooting, 'PCI Access Control Services (ACS)', {NCCL_TROUBLESHOOTING}",
    priority={"cloud": "low", "onprem": "high"},
    controllable=provider_owned(
        Controllable(
            can="no",
            reason=N_("ACS cannot be disabled from inside a VM"),
            alternative=N_(
                "ask the provider whether ATS is enabled on the NIC and ACS set to allow ATS; pick "
                "NVLink instance types for GPU-to-GPU traffic"
            ),
        )
    ),
    references=(NCCL_ACS,),
    gain=ExpectedGain(
        text=N_("P2P and GPUDirect RDMA at PCIe switch speed instead of via the CPU (or hangs)"),
        source=f"NCCL Troubleshooting, 'PCI Access Control Services (ACS)', {NCCL_TROUBLESHOOTING}",
    ),
)
def acs_redirect(ctx: RuleContext):
    bridges = ctx.facts.kernel.acs_redirect_bridges
    if bridges is None:
        return None
    if not bridges:
        return ctx.passed([("kernel.acs_redirect_bridges", [])], msg("no PCIe bridge redirects P2P (ACS)"))
    vm = is_virtual_machine(ctx.facts)
    status = "info" if vm else ("fail" if len(ctx.facts.gpus) > 1 else "warn")
    return ctx.finding(
        status,
        [
            ("kernel.acs_redirect_bridges", bridges),
            ("platform.virtualization", ctx.facts.platform.virtualization),
        ],
        _sentences(
            [
                msg(
                    "With ACS ReqRedir/CmpltRedir on the bridges above GPUs and NICs, P2P is forced up to "
                    "the root complex: slow, or NCCL hangs. On bare metal disable it (BIOS 'ACS' option, "
                    "or setpci at every boot)."
                ),
                *([msg("This is a VM: ACS in the guest is expected; see the alternative.")] if vm else []),
            ]
        ),
        commands=[
            "sudo lspci -vvv | grep -E '^[0-9a-f]|ACSCtl'",
            "for bdf in " + joined(" ", bridges[:8]) + "; do sudo setpci -s $bdf ECAP_ACS+0x6.w=0000; done",
        ],
    )


@rule(
    id="kernel.iommu_not_pt",
    layer="kernel",
    title=N_("IOMMU translates DMA (not in pass-through mode)"),
    source=f"AMD Instinct MI300X system acceptance (IOMMU enabled with iommu=pt), {AMD_MI300X}; NCCL Troubleshooting, ACS/IOMMU section, {NCCL_TROUBLESHOOTING}",
    priority={"cloud": "low", "onprem": "high"},
    controllable=CLOUD_KERNEL,
)
def iommu_not_pt(ctx: RuleContext):
    k = ctx.facts.kernel
    if k.iommu is None or not ctx.facts.gpus:
        return None
    ev = [("kernel.iommu", k.iommu), ("kernel.cmdline", k.cmdline)]
    if k.iommu in ("pt", "off", "default"):
        return ctx.passed(ev, msg("IOMMU mode: {iommu}").format(iommu=k.iommu))
    return ctx.finding(
        "warn",
        ev,
        msg(
            "With the IOMMU translating, GPU peer-to-peer copies are slow or unsupported. Keep it on "
            "but in pass-through mode."
        ),
        commands=[
            "sudo sed -i 's/GRUB_CMDLINE_LINUX=\"/&iommu=pt /' /etc/default/grub && sudo update-grub",
            "sudo reboot",
        ],
        config=['GRUB_CMDLINE_LINUX="... iommu=pt"   # /etc/default/grub'],
    )


@rule(
    id="kernel.numa_balancing",
    layer="kernel",
    title=N_("Automatic NUMA balancing is on"),
    source=f"NVIDIA Grace CPU Benchmarking Guide, 'Platform Configuration' (numa_balancing disabled), {GRACE_PLATFORM}; AMD Instinct MI300X system acceptance, {AMD_MI300X}",
    priority={"cloud": "low", "onprem": "medium"},
    controllable=CLOUD_KERNEL,
    references=(GRACE_PLATFORM,),
)
def numa_balancing(ctx: RuleContext):
    value = ctx.facts.kernel.sysctl.get("kernel.numa_balancing")
    if value is None:
        return None
    ev = [("kernel.sysctl.kernel.numa_balancing", value)]
    if value.strip() == ctx.t("numa_balancing_ok"):
        return ctx.passed(ev, msg("NUMA auto-balancing is off"))
    return ctx.finding(
        "warn",
        ev,
        msg(
            "The kernel migrates pages between NUMA nodes behind the process's back, which adds "
            "latency spikes to pinned buffers and data loaders. Bind ranks to NUMA nodes explicitly "
            "and turn auto-balancing off."
        ),
        commands=["sudo sysctl -w kernel.numa_balancing=0"],
        config=["kernel.numa_balancing = 0   # /etc/sysctl.d/90-gpuwise.conf"],
    )


@rule(
    id="kernel.cpu_governor",
    layer="kernel",
    title=N_("CPU frequency governor is not 'performance'"),
    source=f"NVIDIA Grace CPU Benchmarking Guide, 'Platform Configuration' (performance governor), {GRACE_PLATFORM}",
    priority={"cloud": "low", "onprem": "medium"},
    controllable=CLOUD_KERNEL,
    references=(GRACE_PLATFORM,),
)
def cpu_governor(ctx: RuleContext):
    gov = ctx.facts.cpu.governor
    if gov is None:
        reason = ctx.facts.cpu.unknown.get("governor")
        if reason is None or reason.kind != "not_applicable" or not is_virtual_machine(ctx.facts):
            return None  # only "no cpufreq driver" is the VM's doing; anything else says nothing here
        # Inside most VMs there is no cpufreq driver: the host sets CPU clocks, so say so once, quietly.
        return ctx.finding(
            "info",
            [("cpu.governor", None), ("cpu.unknown.governor", reason.text)],
            msg(
                "The VM shows no CPU frequency driver; the host decides CPU clocks. Nothing to change in "
                "the guest."
            ),
            title=msg("CPU frequency governor not visible in this VM"),
            priority="low",
            controllable=Controllable(
                can="no",
                reason=msg("CPU power management belongs to the hypervisor host"),
                alternative=msg(
                    "choose a compute-optimised or bare-metal instance family if CPU-side work (data "
                    "loading) is the bottleneck"
                ),
            ),
        )
    ev = [("cpu.governor", gov)]
    if gov == ctx.t("governor_ok"):
        return ctx.passed(ev, msg("CPU governor is performance"))
    return ctx.finding(
        "warn",
        ev,
        msg(
            "Power-saving governors lower CPU clocks between bursts, which slows kernel launches, "
            "data loading and NCCL proxy threads."
        ),
        commands=["sudo cpupower frequency-set -g performance"],
    )


@rule(
    id="kernel.thp",
    layer="kernel",
    title=N_("Transparent hugepages setting"),
    source=f"Linux transparent hugepages documentation, {KERNEL_THP}; no GPU-training vendor recommendation found, so informational",
    priority="low",
    controllable=CLOUD_KERNEL,
)
def thp(ctx: RuleContext):
    k = ctx.facts.kernel
    if k.thp_enabled is None:
        return None
    return ctx.finding(
        "info",
        [("kernel.thp_enabled", k.thp_enabled), ("kernel.thp_defrag", k.thp_defrag)],
        msg(
            "Informational: there is no authoritative recommendation for GPU training. 'always' with "
            "synchronous defrag can add allocation stalls on the host; 'madvise' is a common "
            "compromise. Measure before changing."
        ),
        commands=["cat /sys/kernel/mm/transparent_hugepage/{enabled,defrag}"],
    )


@rule(
    id="kernel.swap_on",
    layer="kernel",
    title=N_("Swap is enabled"),
    source=f"heuristic: a training host that swaps shows erratic step times (Linux vm.swappiness, {KERNEL_SYSCTL_VM})",
    priority="low",
    controllable=CLOUD_KERNEL,
)
def swap_on(ctx: RuleContext):
    swap = ctx.facts.memory.swap_total_bytes
    if swap is None:
        return None
    if swap == 0:
        return ctx.passed([("memory.swap_total_bytes", 0)], msg("swap is off"))
    swappiness = ctx.facts.kernel.sysctl.get("vm.swappiness")
    return ctx.finding(
        "info",
        [("memory.swap_total_bytes", swap), ("kernel.sysctl.vm.swappiness", swappiness)],
        msg(
            "When host memory runs short (checkpoint loading, many DataLoader workers) pages of the "
            "training process get swapped and steps stall instead of failing fast. Turn swap off on "
            "dedicated training nodes, or lower vm.swappiness."
        ),
        commands=["sudo swapoff -a", "sudo sysctl -w vm.swappiness=1"],
    )


@rule(
    id="kernel.memlock_limited",
    layer="kernel",
    title=N_("Locked-memory limit (ulimit -l) is not unlimited"),
    source=f"NCCL Troubleshooting, 'Sharing Data' and RDMA (--ulimit memlock=-1), {NCCL_TROUBLESHOOTING}; RDMA registers pinned memory",
    priority={"cloud": "medium", "onprem": "high"},
)
def memlock_limited(ctx: RuleContext):
    k = ctx.facts.kernel
    if k.memlock_unlimited is None:
        return None
    ev = [("kernel.memlock_unlimited", k.memlock_unlimited), ("kernel.memlock_bytes", k.memlock_bytes)]
    if k.memlock_unlimited:
        return ctx.passed(ev[:1], msg("memlock is unlimited"))
    rdma = bool(ctx.facts.network.rdma_devices)
    return ctx.finding(
        "warn" if rdma else "info",
        ev + [("network.rdma_devices", len(ctx.facts.network.rdma_devices))],
        msg(
            "RDMA (InfiniBand/RoCE, GPUDirect) registers pinned memory and fails or falls back to "
            "sockets when the locked-memory limit is small; pinned DataLoader buffers count too."
        ),
        priority=None if rdma else "low",
        commands=["docker run --ulimit memlock=-1 ...", "ulimit -l unlimited"],
        config=[
            "* soft memlock unlimited",
            "* hard memlock unlimited   # /etc/security/limits.d/99-memlock.conf",
        ],
    )
