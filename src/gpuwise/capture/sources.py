"""The source table: every file and command gpuwise reads from a machine, by stable id.

Command ids are a contract (DESIGN.md, "The capture format"): a capture stores the stdout of
command `id` as commands/<id>.txt, and other tools and tests build captures by hand with them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class CommandSource:
    id: str
    argv: tuple[str, ...]
    timeout_s: float = 10.0


@dataclass(frozen=True)
class InternalCollector:
    """A 'command' implemented in Python: `target` is 'module:function', called as fn(env) -> str."""

    id: str
    target: str
    timeout_s: float = 20.0

    def load(self) -> Callable[[dict[str, str]], str]:
        module, _, func = self.target.partition(":")
        return getattr(importlib.import_module(module), func)


def _cmds(*rows: tuple[str, tuple[str, ...], float]) -> dict[str, CommandSource]:
    return {cid: CommandSource(cid, argv, t) for cid, argv, t in rows}


COMMANDS: dict[str, CommandSource] = _cmds(
    # GPU (nvidia-smi is the capture source; NVML is the live one, below)
    ("nvidia-smi-q-x", ("nvidia-smi", "-q", "-x"), 60.0),
    ("nvidia-smi-topo-m", ("nvidia-smi", "topo", "-m"), 30.0),
    ("nvidia-smi-nvlink-s", ("nvidia-smi", "nvlink", "-s"), 30.0),
    ("nvidia-smi", ("nvidia-smi",), 30.0),  # the plain table carries infoROM and similar warnings
    # CPU, memory, NUMA
    ("lscpu", ("lscpu",), 10.0),
    ("numactl-H", ("numactl", "-H"), 10.0),
    # network
    ("ibv_devinfo-v", ("ibv_devinfo", "-v"), 20.0),
    ("ibstat", ("ibstat",), 20.0),
    ("ibstatus", ("ibstatus",), 20.0),  # infiniband-diags' script over sysfs: where ibstat is missing
    ("ibdev2netdev", ("ibdev2netdev",), 10.0),  # MLNX_OFED / DOCA: each RDMA port's network interface
    ("ofed_info-s", ("ofed_info", "-s"), 10.0),  # MLNX_OFED / DOCA-OFED version; absent with inbox drivers
    ("ip-j-addr", ("ip", "-j", "addr"), 10.0),
    # storage
    ("findmnt-J", ("findmnt", "-J"), 10.0),
    ("lsblk-J", ("lsblk", "-J", "-b", "-o", "NAME,TYPE,SIZE,ROTA,TRAN,MODEL,MOUNTPOINT"), 10.0),
    ("df-P-B1", ("df", "-P", "-B1"), 10.0),
    # kernel, PCIe
    ("lspci-vvv", ("lspci", "-vvv"), 30.0),
    # the kernel ring buffer: NVIDIA Xid events (NVRM: Xid ...); needs root where kernel.dmesg_restrict=1
    ("dmesg", ("dmesg",), 10.0),
    # the kernel log of this boot with wall-clock times (link flaps, PCIe AER, OOM kills, hung tasks, MCEs);
    # the syslog files are the fallback where there is no journal. The newest lines only: logs grow large.
    ("journalctl-k", ("journalctl", "-k", "-b", "--no-pager", "-o", "short-iso", "-n", "20000"), 30.0),
    # the previous boot's kernel log: where a node that crashed or hung logged its last events
    (
        "journalctl-k-b-1",
        ("journalctl", "-k", "-b", "-1", "--no-pager", "-o", "short-iso", "-n", "20000"),
        30.0,
    ),
    ("tail-kern-log", ("tail", "-n", "20000", "/var/log/kern.log"), 10.0),
    ("tail-syslog", ("tail", "-n", "20000", "/var/log/syslog"), 10.0),
    # NVIDIA Fabric Manager (NVSwitch systems): its own log file, and its unit's journal
    ("tail-fabricmanager-log", ("tail", "-n", "5000", "/var/log/fabricmanager.log"), 10.0),
    (
        "journalctl-fabricmanager",
        ("journalctl", "-u", "nvidia-fabricmanager", "--no-pager", "-o", "short-iso", "-n", "2000"),
        20.0,
    ),
    ("systemd-detect-virt", ("systemd-detect-virt",), 5.0),
    ("systemd-detect-virt-vm", ("systemd-detect-virt", "--vm"), 5.0),
    ("systemd-detect-virt-c", ("systemd-detect-virt", "--container"), 5.0),
    # services and monitoring agents
    (
        "systemctl-is-active",
        (
            "systemctl",
            "is-active",
            "nvidia-persistenced",
            "nvidia-fabricmanager",
            "nvidia-dcgm",
            "dcgm-exporter",
            "prometheus-node-exporter",
        ),
        10.0,
    ),
    ("ps-comm", ("ps", "-eo", "comm="), 10.0),
    # toolchain and container runtime
    ("nvcc-version", ("nvcc", "--version"), 10.0),
    ("ldconfig-p", ("ldconfig", "-p"), 10.0),
    ("docker-version", ("docker", "--version"), 5.0),
    ("podman-version", ("podman", "--version"), 5.0),
    ("nvidia-container-cli-version", ("nvidia-container-cli", "--version"), 5.0),
    ("dcgmi-version", ("dcgmi", "--version"), 5.0),
    # DCGM's quick diagnostic (run level 1, seconds to a minute), JSON per test and GPU; capture only:
    # a live doctor does not run it (facts/evidence.py)
    ("dcgmi-diag-r1-j", ("dcgmi", "diag", "-r", "1", "-j"), 180.0),
    # every NVLink's state per GPU and NVSwitch (U/D/X/_), read in seconds without loading the GPUs
    ("dcgmi-nvlink-link-status", ("dcgmi", "nvlink", "--link-status"), 20.0),
)

INTERNAL_COLLECTORS: dict[str, InternalCollector] = {
    c.id: c
    for c in (
        InternalCollector("nvml", "gpuwise.capture.nvml:collect_json", 30.0),
        InternalCollector("env", "gpuwise.capture.environment:collect_env", 5.0),
        InternalCollector("python-env", "gpuwise.capture.environment:collect_python_env", 10.0),
    )
}

FILES: tuple[str, ...] = (
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/cmdline",
    "/proc/version",
    "/proc/modules",
    "/proc/mdstat",
    "/proc/swaps",
    "/proc/mounts",
    "/proc/self/limits",
    "/proc/self/cgroup",
    "/proc/1/cgroup",
    "/etc/os-release",
    "/etc/hostname",
    "/etc/nccl.conf",
    "/sys/module/mlx5_core/version",  # set by MLNX_OFED builds of the driver; inbox builds have none
    "/.dockerenv",
    "/run/.containerenv",
    "/sys/hypervisor/type",
    "/sys/kernel/mm/transparent_hugepage/enabled",
    "/sys/kernel/mm/transparent_hugepage/defrag",
    "/proc/sys/net/core/rmem_max",
    "/proc/sys/net/core/wmem_max",
    "/proc/sys/net/ipv4/tcp_rmem",
    "/proc/sys/net/ipv4/tcp_wmem",
    "/proc/sys/vm/dirty_ratio",
    "/proc/sys/vm/swappiness",
    "/proc/sys/kernel/numa_balancing",
    "/sys/class/dmi/id/sys_vendor",
    "/sys/class/dmi/id/product_name",
    "/sys/class/dmi/id/product_version",
    "/sys/class/dmi/id/board_vendor",
    "/sys/class/dmi/id/board_name",
    "/sys/class/dmi/id/bios_vendor",
    "/sys/class/dmi/id/bios_version",
    "/sys/class/dmi/id/chassis_vendor",
    "/sys/class/dmi/id/chassis_asset_tag",
    "/sys/class/dmi/id/product_serial",
    "/sys/class/dmi/id/board_serial",
    "/sys/class/dmi/id/chassis_serial",
    "/sys/class/dmi/id/product_uuid",
    "/sys/fs/cgroup/cpu.max",
    "/sys/fs/cgroup/memory.max",
    "/sys/fs/cgroup/cpu/cpu.cfs_quota_us",
    "/sys/fs/cgroup/cpu/cpu.cfs_period_us",
    "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq",
)

GLOBS: tuple[str, ...] = (
    "/sys/class/net/*/speed",
    "/sys/class/net/*/mtu",
    "/sys/class/net/*/operstate",
    "/sys/class/net/*/address",
    "/sys/class/net/*/device/uevent",
    "/sys/class/infiniband/*/fw_ver",
    "/sys/class/infiniband/*/ports/*/state",
    "/sys/class/infiniband/*/ports/*/phys_state",
    "/sys/class/infiniband/*/ports/*/rate",
    "/sys/class/infiniband/*/ports/*/link_layer",
    "/sys/block/*/queue/rotational",
    "/sys/block/*/size",
    "/sys/block/*/device/model",
    "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor",
    "/sys/devices/system/node/node*/meminfo",
    "/sys/devices/system/node/node*/cpulist",
    "/sys/kernel/mm/hugepages/*/nr_hugepages",
)

ALL_COMMAND_IDS: tuple[str, ...] = tuple(COMMANDS) + tuple(INTERNAL_COLLECTORS)
