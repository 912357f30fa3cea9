"""The Facts model: what gpuwise knows about a machine, layer by layer (schema gpuwise-facts/1).

Every value may be None (unknown). When it is, the layer's `unknown` dict says why, keyed by
field name, so a missing value always travels with its reason: `{"kind": ..., "text": ...}`.
Code decides from the `kind` (and from fields), never from the `text`, which is for people and
may be reworded at any time. Units are in the field names.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, get_args

from pydantic import ConfigDict, Field

from gpuwise.documents.ids import FACTS_SCHEMA
from gpuwise.i18n import joined
from gpuwise.textmodel import TextModel

Environment = Literal["cloud", "onprem", "unknown"]

UnknownKind = Literal["not_captured", "tool_missing", "absent", "failed", "unparsable", "not_applicable"]
"""Why a value is None, as data:

- not_captured: the command or file was not recorded (a capture made without it): no claim either way;
- tool_missing: the command is not installed on the machine;
- absent: the file does not exist (or was unreadable) on the machine;
- failed: the tool ran and failed (exit code, timeout, error), or a collector crashed;
- unparsable: there was output, but the value is not in it (or is malformed);
- not_applicable: the machine has no such value (no limit set, a CPU-only torch, not on the command line).
"""
UNKNOWN_KINDS: tuple[str, ...] = get_args(UnknownKind)


class Unknown(TextModel):
    """Why one field is None: `kind` for code, `text` for people (never parsed)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: UnknownKind
    text: str

    def __str__(self) -> str:
        return self.text


def combined(reasons: Iterable[Unknown], text: str) -> Unknown:
    """One reason for a value that several sources failed to give. Its kind is the least conclusive
    of theirs (not captured beats tool missing beats failed ...), so no absence is claimed from a
    source that was never looked at."""
    kinds = [r.kind for r in reasons]
    return Unknown(kind=min(kinds, key=UNKNOWN_KINDS.index) if kinds else "not_applicable", text=text)


class Part(TextModel):
    """Base for every facts object: strict keys, plus reasons for the fields that are unknown."""

    model_config = ConfigDict(extra="forbid")

    unknown: dict[str, Unknown] = Field(default_factory=dict)

    def why(self, field: str, reason: Unknown | str, kind: UnknownKind | None = None) -> None:
        """Record why `field` is None. The first reason wins (it is usually the root cause).

        `reason` is an Unknown (from the sourcing helpers), or a text with its `kind`.
        """
        if not isinstance(reason, Unknown):
            if kind is None:
                raise TypeError(f"why({field!r}, text) needs kind=: one of {joined(', ', UNKNOWN_KINDS)}")
            reason = Unknown(kind=kind, text=reason)
        self.unknown.setdefault(field, reason)


# ---------------------------------------------------------------- hardware: GPUs


class PcieLink(Part):
    gen_current: int | None = None
    gen_max: int | None = None
    width_current: int | None = None
    width_max: int | None = None


class Gpu(Part):
    index: int | None = None
    name: str | None = None
    uuid: str | None = None
    serial: str | None = None
    vbios_version: str | None = None  # "96.00.89.00.01": drift between nodes shows a missed firmware update
    pci_bus_id: str | None = None
    memory_total_bytes: int | None = None
    pcie: PcieLink = Field(default_factory=PcieLink)
    power_limit_watts: float | None = None  # the limit in force (enforced / current)
    power_limit_default_watts: float | None = None
    power_limit_max_watts: float | None = None
    power_draw_watts: float | None = None
    performance_state: str | None = None  # "P0" (full speed) ... "P8"/"P12" (idle)
    utilization_gpu_percent: float | None = None  # share of the last sample period a kernel ran
    process_count: int | None = None  # compute processes holding the GPU
    persistence_mode: bool | None = None
    ecc_enabled: bool | None = None
    ecc_pending_enabled: bool | None = None
    ecc_volatile_uncorrectable: int | None = None
    ecc_aggregate_uncorrectable: int | None = None
    retired_pages_sbe: int | None = None
    retired_pages_dbe: int | None = None
    retired_pages_pending: bool | None = None
    remapped_rows_pending: bool | None = None
    remapped_rows_failure: bool | None = None
    mig_enabled: bool | None = None
    sm_clock_mhz: int | None = None
    sm_clock_max_mhz: int | None = None
    temperature_c: float | None = None
    clock_event_reasons: list[str] | None = None  # active throttle reasons, e.g. ["sw_thermal_slowdown"]
    fabric_state: str | None = None  # NVSwitch systems: "Completed", "In Progress", "Not Started", ...
    compute_capability: str | None = None  # "9.0"
    warnings: list[str] = Field(default_factory=list)  # e.g. "infoROM is corrupted"
    error: str | None = None  # the GPU could not be read at all (e.g. NVML handle failed); other fields None


class GpuProbe(Part):
    """How the GPU list was obtained, and what went wrong."""

    source: Literal["nvml", "nvidia-smi-q-x", "nvidia-smi-q", "none"] = "none"
    attached_gpus: int | None = None  # as the tool reports it; may exceed len(gpus) in trimmed files
    error: str | None = None  # e.g. NVML init failure: recorded, not raised
    notes: list[str] = Field(default_factory=list)  # gpuwise's remarks on the sources, for people
    warnings: list[str] = Field(default_factory=list)  # tool warnings (verbatim) naming no listed GPU
    pci_gpus: list[str] | None = None  # bus ids of NVIDIA display/3D controllers lspci lists (driver or not)


# ---------------------------------------------------------------- hardware: topology


class NvLink(TextModel):
    model_config = ConfigDict(extra="forbid")
    link: int
    active: bool
    speed_gb_s: float | None = None  # per link, GB/s as `nvidia-smi nvlink -s` prints it


class GpuNvLinks(TextModel):
    model_config = ConfigDict(extra="forbid")
    gpu_index: int
    name: str | None = None  # the model nvidia-smi prints on the GPU's line
    links: list[NvLink] = Field(default_factory=list)
    # NVML's "Unable to retrieve NVLink information as all links are inActive": no link is up (on a part
    # without NVLink hardware NVML prints the same, so the rule checks the model in the catalog)
    all_inactive: bool = False


class Topology(Part):
    gpu_names: list[str] = Field(default_factory=list)  # column labels: GPU0, GPU1, ...
    nic_names: list[str] = Field(default_factory=list)  # NIC0, ... (or mlx5_0 in old outputs)
    nic_devices: dict[str, str] = Field(default_factory=dict)  # NIC0 -> mlx5_0, from the legend
    gpu_links: list[list[str]] | None = None  # [i][j]: "X", "NV12", "PIX", "PXB", "PHB", "NODE", "SYS"
    gpu_nic_links: list[list[str]] | None = None  # [gpu][nic]
    gpu_cpu_affinity: list[str | None] | None = None  # "0-47,96-143"
    gpu_numa_affinity: list[int | None] | None = None
    nvlinks: list[GpuNvLinks] | None = None  # from nvidia-smi nvlink -s


# ---------------------------------------------------------------- hardware: CPU and memory


class NumaNode(TextModel):
    model_config = ConfigDict(extra="forbid")
    id: int
    cpus: str | None = None  # cpulist, "0-23,48-71"
    memory_total_bytes: int | None = None
    memory_free_bytes: int | None = None


class Cpu(Part):
    model: str | None = None
    vendor: str | None = None
    architecture: str | None = None
    sockets: int | None = None
    cores: int | None = None  # physical cores, all sockets
    threads: int | None = None  # logical CPUs online
    max_mhz: float | None = None
    flags: list[str] | None = None
    numa_nodes: int | None = None
    numa: list[NumaNode] = Field(default_factory=list)
    governor: str | None = None  # scaling governor of cpu0 (or "mixed: ...")


class Memory(Part):
    total_bytes: int | None = None
    available_bytes: int | None = None
    swap_total_bytes: int | None = None
    hugepages_total: int | None = None
    hugepage_size_bytes: int | None = None


# ---------------------------------------------------------------- network


class Nic(TextModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    speed_mbps: int | None = None
    mtu: int | None = None
    driver: str | None = None
    state: str | None = None  # "up", "down", "unknown"
    mac: str | None = None
    ipv4: list[str] = Field(default_factory=list)
    virtual: bool = False  # lo, docker0, veth*, bridges: no physical device


class RdmaPort(TextModel):
    model_config = ConfigDict(extra="forbid")
    port: int
    state: str | None = None  # "ACTIVE", "DOWN", "INIT", ...
    phys_state: str | None = None  # "LINK_UP", "DISABLED", "POLLING", ...
    rate_gbps: float | None = None
    link_layer: str | None = None  # "InfiniBand" or "Ethernet" (RoCE)
    # `ibdev2netdev`: the port's network interface and that interface's state ("Up"/"Down"); the netdev's
    # state is not the RDMA port's (an InfiniBand port without IPoIB shows "Down" while ACTIVE)
    netdev: str | None = None
    netdev_state: str | None = None


class RdmaDevice(TextModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    model: str | None = None  # "MT4129" (ibstat "CA type", ibv_devinfo vendor_part_id, sysfs hca_type)
    fw_version: str | None = None
    ports: list[RdmaPort] = Field(default_factory=list)


class Network(Part):
    nics: list[Nic] = Field(default_factory=list)
    rdma_devices: list[RdmaDevice] = Field(default_factory=list)
    rdma_source: str | None = None  # which source gave rdma_devices
    ofed_version: str | None = None  # `ofed_info -s` (MLNX_OFED / DOCA-OFED) or the mlx5_core module version
    nvidia_peermem_loaded: bool | None = None
    nccl_conf: dict[str, str] | None = None  # /etc/nccl.conf, None when absent
    nccl_env: dict[str, str] = Field(default_factory=dict)


# ---------------------------------------------------------------- storage


class Mount(TextModel):
    model_config = ConfigDict(extra="forbid")
    mountpoint: str
    device: str | None = None
    fstype: str | None = None
    options: str | None = None
    total_bytes: int | None = None
    free_bytes: int | None = None
    network: bool = False  # nfs, cifs, lustre, fuse object stores, ...


class BlockDevice(TextModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    size_bytes: int | None = None
    rotational: bool | None = None
    nvme: bool = False
    model: str | None = None


class MdArray(TextModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    level: str | None = None  # "raid0", "raid1", ...
    devices: list[str] = Field(default_factory=list)
    active: bool | None = None


class Storage(Part):
    mounts: list[Mount] = Field(default_factory=list)
    block_devices: list[BlockDevice] = Field(default_factory=list)
    md_arrays: list[MdArray] = Field(default_factory=list)
    shm_bytes: int | None = None


# ---------------------------------------------------------------- kernel and OS


class XidEvent(TextModel):
    """One `NVRM: Xid (PCI:<bus id>): <code>, <detail>` line from the kernel log."""

    model_config = ConfigDict(extra="forbid")
    xid: int
    pci_bus_id: str | None = None  # "0000:3b:00" as the driver prints it (no function number)
    detail: str = ""  # the rest of the line after the code
    timestamp: str | None = None  # as dmesg printed it ("179.437933" seconds since boot, or a date)
    # "previous": from the previous boot's journal (journalctl -k -b -1); None: this boot
    boot: str | None = None


class Kernel(Part):
    release: str | None = None
    distro: str | None = None
    cmdline: str | None = None
    iommu: str | None = None  # "pt", "on", "off", "default" (not set on the command line)
    isolcpus: str | None = None
    nohz_full: str | None = None
    thp_enabled: str | None = None  # the bracketed choice: "always", "madvise", "never"
    thp_defrag: str | None = None
    sysctl: dict[str, str] = Field(default_factory=dict)  # "vm.swappiness" -> "60"
    memlock_unlimited: bool | None = None
    memlock_bytes: int | None = None
    acs_redirect_bridges: list[str] | None = None  # BDFs with ACS ReqRedir+/CmpltRedir+ (lspci -vvv)
    modules: list[str] | None = None  # loaded kernel modules
    xid_events: list[XidEvent] | None = None  # NVIDIA Xid lines in the kernel log (dmesg), oldest first


# ---------------------------------------------------------------- toolchain and driver


class Software(Part):
    driver_version: str | None = None
    cuda_driver_version: str | None = None  # the CUDA version the driver supports, "12.4"
    python_version: str | None = None
    torch_version: str | None = None
    torch_build: Literal["cuda", "rocm", "cpu"] | None = None  # the accelerator torch was built for
    torch_cuda: str | None = None  # CUDA torch was built with
    torch_cudnn: str | None = None
    torch_nccl: str | None = None
    nvcc_version: str | None = None
    nccl_system_version: str | None = None  # libnccl.so.X.Y.Z found by ldconfig
    container_runtimes: list[str] = Field(default_factory=list)  # "docker 28.2.2", ...
    nvidia_container_toolkit: str | None = None
    services: dict[str, str] = Field(default_factory=dict)  # systemd unit -> "active", "inactive", ...


# ---------------------------------------------------------------- monitoring


class Monitoring(Part):
    dcgm_version: str | None = None
    agents_running: list[str] = Field(default_factory=list)  # dcgm-exporter, node_exporter, telegraf, ...


# ---------------------------------------------------------------- platform and isolation


class Platform(Part):
    virtualization: str | None = None  # "none", "kvm", "xen", "microsoft", "vmware", ...
    container: str | None = None  # "none", "docker", "podman", "kubernetes", ...
    sys_vendor: str | None = None
    product_name: str | None = None
    bios_vendor: str | None = None
    cloud_provider: str | None = None  # "aws", "tencent", "azure", "gcp", "alibaba", "baidu", ...
    instance_type: str | None = None
    cgroup_cpu_limit: float | None = None  # CPUs
    cgroup_memory_limit_bytes: int | None = None
    environment: Environment = "unknown"
    environment_reason: str = ""


# ---------------------------------------------------------------- evidence: DCGM diag, Fabric Manager, kernel log
# Filled by `gpuwise capture` (commands and files) or `doctor --evidence FILE`; judged by the doctor rules in
# advise/rules/dcgm_diag.py, fabric_manager.py and kernel_events.py.
DiagStatus = Literal["pass", "fail", "warn", "skip"]


class DcgmResult(TextModel):
    """One test's result for one GPU (gpu None: DCGM reported it for all GPUs, 'Fail - All')."""

    model_config = ConfigDict(extra="forbid")
    test: str
    category: str | None = None  # Deployment, Integration, Hardware, Stress, ...
    gpu: int | None = None
    status: DiagStatus
    messages: list[str] = Field(default_factory=list)  # DCGM's own warning / info text


class DcgmDiag(TextModel):
    model_config = ConfigDict(extra="forbid")
    source: str
    dcgm_version: str | None = None
    driver_version: str | None = None
    results: list[DcgmResult] = Field(default_factory=list)


class DcgmNvlink(TextModel):
    """`dcgmi nvlink --link-status`: each GPU's and NVSwitch's links, one letter per link as DCGM prints them
    (U up, D down, X disabled, _ not supported)."""

    model_config = ConfigDict(extra="forbid")
    source: str
    gpus: dict[int, str] = Field(default_factory=dict)  # DCGM gpuId -> "UUDD..."
    switches: dict[str, str] = Field(default_factory=dict)  # NVSwitch physical id -> its links


FabricKind = Literal[
    "nvswitch_fatal",
    "nvswitch_nonfatal",
    "training_failed",
    "degraded",
    "fm_start",
    "fm_failed",
    "no_nvswitch",
    "error",
]


class FabricEvent(TextModel):
    model_config = ConfigDict(extra="forbid")
    kind: FabricKind
    error: int | None = None  # SXid / NVSwitch error number
    switch: str | None = None  # NVSwitch PCI bus id
    physical_id: int | None = None
    port: int | None = None
    t: float | None = None  # seconds on the log's clock (gpuwise.facts.log_time)
    stamp: str | None = None  # the timestamp as the log printed it
    line: str = ""


class FabricManagerLog(TextModel):
    model_config = ConfigDict(extra="forbid")
    source: str
    events: list[FabricEvent] = Field(default_factory=list)


KernelKind = Literal[
    "link_down",
    "link_up",
    "aer_corrected",
    "aer_nonfatal",
    "aer_fatal",
    "oom_kill",
    "hung_task",
    "mce",
    "mce_corrected",
    "mce_uncorrected",
    "sxid_fatal",
    "sxid_nonfatal",
    "bond_no_active",  # the bonding driver: "bond1: now running without any active interface!"
    "bond_active",  # "bond0: making interface eno49 the new active one", "first active interface up!"
]


class KernelEvent(TextModel):
    model_config = ConfigDict(extra="forbid")
    kind: KernelKind
    device: str  # interface, PCI address, process name, memory controller
    t: float | None = None  # seconds on the log's own clock (boot time or wall clock), for windows
    clock: Literal["boot", "wall"] | None = None
    stamp: str | None = None  # the timestamp as the log printed it
    count: int = 1  # EDAC "262 CE" lines stand for many errors
    detail: str = ""


class KernelLog(TextModel):
    model_config = ConfigDict(extra="forbid")
    source: str
    events: list[KernelEvent] = Field(default_factory=list)
    lines: int = 0
    end: dict[str, float] = Field(default_factory=dict)  # clock -> time of the log's last stamped line


class Evidence(Part):
    """Evidence kinds read from the node's own tools and logs; None: not read (the reason is in `unknown`)."""

    dcgm_diag: list[DcgmDiag] | None = None
    dcgm_nvlink: list[DcgmNvlink] | None = None
    fabric_manager: list[FabricManagerLog] | None = None
    kernel_logs: list[KernelLog] | None = None


class Meta(TextModel):
    model_config = ConfigDict(extra="forbid")
    hostname: str | None = None
    captured_at: str | None = None
    gpuwise_version: str | None = None
    source: str = "live"  # "live" or the capture path
    commands: dict[str, str] = Field(default_factory=dict)  # id -> "ok" | "missing" | "rc=1" | ...


class Facts(TextModel):
    """Everything probe knows about one machine."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: str = Field(FACTS_SCHEMA, alias="schema")
    meta: Meta = Field(default_factory=Meta)
    gpus: list[Gpu] = Field(default_factory=list)
    gpu_probe: GpuProbe = Field(default_factory=GpuProbe)
    topology: Topology = Field(default_factory=Topology)
    cpu: Cpu = Field(default_factory=Cpu)
    memory: Memory = Field(default_factory=Memory)
    network: Network = Field(default_factory=Network)
    storage: Storage = Field(default_factory=Storage)
    kernel: Kernel = Field(default_factory=Kernel)
    software: Software = Field(default_factory=Software)
    monitoring: Monitoring = Field(default_factory=Monitoring)
    platform: Platform = Field(default_factory=Platform)
    evidence: Evidence = Field(default_factory=Evidence)

    def to_json_dict(self) -> dict:
        return self.model_dump(mode="json", by_alias=True)
