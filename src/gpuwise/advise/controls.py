"""Who can change what a finding is about, per environment kind: named presets for `@rule(controllable=...)`.

A rule's `controllable` maps an environment kind ("cloud", "onprem", "unknown") to a Controllable;
a kind left out means "yes, a setting on this machine" (see engine.Rule.controllable_for). Most
rules fall in a few cases, each named here once:

    @rule(..., controllable=CLOUD_HARDWARE)            # provider's hardware on cloud, yours on-prem
    @rule(..., controllable=provider_owned(Controllable(can="no", reason=..., alternative=...)))
    @rule(..., controllable=cloud_only(DRIVER_ON_CLOUD))  # only cloud differs from "yes"
    @rule(..., controllable=everywhere(CONTAINER_START))  # the same in every environment
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from gpuwise.advise.finding import Controllable
from gpuwise.i18n import N_

Controls = Mapping[str, Controllable]

ONPREM_YES = Controllable(can="yes", reason=N_("your own hardware: you can change it"))


def provider_owned(cloud: Controllable) -> Controls:
    """On a cloud VM the provider decides (`cloud` says what to do instead); on your own hardware you do."""
    return MappingProxyType({"cloud": cloud, "onprem": ONPREM_YES})


def cloud_only(cloud: Controllable) -> Controls:
    """Only a cloud VM limits it; elsewhere it is a setting on this machine."""
    return MappingProxyType({"cloud": cloud})


def everywhere(control: Controllable) -> Controls:
    """The same answer in every environment (e.g. set when a container starts)."""
    return MappingProxyType({"cloud": control, "onprem": control, "unknown": control})


# ---------------------------------------------------------------- the cloud answers reused by several rules

FIRMWARE_ON_CLOUD = Controllable(
    can="no",
    reason=N_("BIOS, PCIe and firmware settings are not reachable from a cloud VM"),
    alternative=N_(
        "choose an instance family whose GPUs are attached at full PCIe width/generation "
        "(bare-metal or full-node GPU shapes), or report it to the provider with this evidence"
    ),
)
HARDWARE_ON_CLOUD = Controllable(
    can="no",
    reason=N_("the physical GPU and its board belong to the provider"),
    alternative=N_(
        "stop this instance and start a new one (you usually land on another host), and report "
        "the GPU to the provider with this evidence"
    ),
)
KERNEL_ON_CLOUD = Controllable(
    can="partly",
    reason=N_("you control the guest kernel, but the hypervisor decides what the VM sees"),
    alternative=N_(
        "set it in the guest if the VM exposes it; otherwise pick an image or instance type that does"
    ),
)
FABRIC_ON_CLOUD = Controllable(
    can="no",
    reason=N_("the network fabric is chosen by the instance type"),
    alternative=N_(
        "choose an instance type with RDMA networking (e.g. InfiniBand/RoCE or EFA-class shapes) "
        "and place the nodes in one availability zone / placement group"
    ),
)
INSTANCE_SIZE_ON_CLOUD = Controllable(
    can="partly",
    reason=N_("the CPU/RAM per GPU is fixed by the instance type"),
    alternative=N_("pick a larger instance size or a family with more vCPUs/RAM per GPU"),
)
DRIVER_ON_CLOUD = Controllable(
    can="partly",
    reason=N_("the guest driver is yours on most GPU VMs, but managed images/containers pin it"),
    alternative=N_(
        "pick an image (deep-learning image) whose driver supports your CUDA, or a torch build "
        "for this driver"
    ),
)
STORAGE_ON_CLOUD = Controllable(
    can="partly",
    reason=N_("disk types come with the instance and its volumes"),
    alternative=N_("choose an instance with local NVMe (instance store) or a higher-IOPS disk class"),
)
CONTAINER_START = Controllable(
    can="partly",
    reason=N_("set when the container is started, not from inside it"),
    alternative=N_("restart the container with the options below (or ask the platform team)"),
)

# ---------------------------------------------------------------- presets

CLOUD_FIRMWARE = provider_owned(FIRMWARE_ON_CLOUD)
CLOUD_HARDWARE = provider_owned(HARDWARE_ON_CLOUD)
CLOUD_KERNEL = provider_owned(KERNEL_ON_CLOUD)
CLOUD_FABRIC = provider_owned(FABRIC_ON_CLOUD)
CLOUD_INSTANCE_SIZE = provider_owned(INSTANCE_SIZE_ON_CLOUD)
CLOUD_DRIVER = cloud_only(DRIVER_ON_CLOUD)
CLOUD_STORAGE = cloud_only(STORAGE_ON_CLOUD)
CONTAINER = everywhere(CONTAINER_START)
