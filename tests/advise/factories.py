"""Hand-built Facts for rule unit tests: a healthy 8-GPU on-prem node that triggers nothing.

Each rule test edits one thing in it (named in the test) so the rule fires, and checks the
unedited node does not fire it. End-to-end tests through captures are in test_doctor_captures.py.
"""

from __future__ import annotations

from gpuwise.documents.bench import BenchReport, Measurement
from gpuwise.facts.models import (
    BlockDevice,
    Cpu,
    Facts,
    Gpu,
    GpuNvLinks,
    GpuProbe,
    Kernel,
    MdArray,
    Memory,
    Monitoring,
    Mount,
    Network,
    Nic,
    NvLink,
    PcieLink,
    Platform,
    RdmaDevice,
    RdmaPort,
    Software,
    Storage,
    Topology,
)

GIB = 2**30


def healthy_gpu(i: int) -> Gpu:
    return Gpu(
        index=i,
        name="NVIDIA H100 80GB HBM3",
        pci_bus_id=f"00000000:{0x18 + i:02X}:00.0",
        memory_total_bytes=80 * GIB,
        pcie=PcieLink(gen_current=5, gen_max=5, width_current=16, width_max=16),
        power_limit_watts=700,
        persistence_mode=True,
        ecc_enabled=True,
        ecc_pending_enabled=True,
        ecc_volatile_uncorrectable=0,
        ecc_aggregate_uncorrectable=0,
        retired_pages_sbe=0,
        retired_pages_dbe=0,
        retired_pages_pending=False,
        remapped_rows_pending=False,
        remapped_rows_failure=False,
        mig_enabled=False,
        sm_clock_mhz=1980,
        sm_clock_max_mhz=1980,
        temperature_c=35.0,
        clock_event_reasons=["gpu_idle"],
        fabric_state="Completed",
        compute_capability="9.0",
    )


def healthy_node(n_gpus: int = 8) -> Facts:
    """A well set-up 8x H100 on-prem node with IB, NVMe RAID0, DCGM: every problem rule stays quiet."""
    names = [f"GPU{i}" for i in range(n_gpus)]
    return Facts(
        gpus=[healthy_gpu(i) for i in range(n_gpus)],
        gpu_probe=GpuProbe(source="nvidia-smi-q-x", attached_gpus=n_gpus),
        topology=Topology(
            gpu_names=names,
            nic_names=["NIC0", "NIC1"],
            nic_devices={"NIC0": "mlx5_0", "NIC1": "mlx5_1"},
            gpu_links=[["X" if i == j else "NV18" for j in range(n_gpus)] for i in range(n_gpus)],
            gpu_nic_links=[["PIX", "SYS"] if i < n_gpus // 2 else ["SYS", "PIX"] for i in range(n_gpus)],
            nvlinks=[
                GpuNvLinks(
                    gpu_index=i, links=[NvLink(link=k, active=True, speed_gb_s=26.562) for k in range(18)]
                )
                for i in range(n_gpus)
            ],
        ),
        cpu=Cpu(
            model="Intel Xeon Platinum 8480+",
            sockets=2,
            cores=112,
            threads=224,
            numa_nodes=2,
            governor="performance",
        ),
        memory=Memory(total_bytes=2048 * GIB, available_bytes=2000 * GIB, swap_total_bytes=0),
        network=Network(
            nics=[
                Nic(name="lo", virtual=True, state="unknown", mtu=65536),
                Nic(name="eth0", speed_mbps=100000, mtu=9000, state="up"),
            ],
            rdma_devices=[
                RdmaDevice(
                    name=f"mlx5_{k}",
                    ports=[
                        RdmaPort(
                            port=1,
                            state="ACTIVE",
                            phys_state="LINK_UP",
                            rate_gbps=400.0,
                            link_layer="InfiniBand",
                        )
                    ],
                )
                for k in range(2)
            ],
            rdma_source="ibv_devinfo-v",
            nvidia_peermem_loaded=True,
            nccl_conf=None,
            nccl_env={},
        ),
        storage=Storage(
            mounts=[
                Mount(mountpoint="/", fstype="ext4"),
                Mount(mountpoint="/raid", device="/dev/md0", fstype="xfs"),
            ],
            block_devices=[
                BlockDevice(name="nvme0n1", nvme=True, rotational=False),
                BlockDevice(name="nvme1n1", nvme=True, rotational=False),
            ],
            md_arrays=[MdArray(name="md0", level="raid0", devices=["nvme0n1", "nvme1n1"], active=True)],
            shm_bytes=1024 * GIB,
        ),
        kernel=Kernel(
            release="6.8.0",
            cmdline="BOOT_IMAGE=/vmlinuz iommu=pt",
            iommu="pt",
            thp_enabled=None,
            sysctl={"kernel.numa_balancing": "0", "vm.swappiness": "1"},
            memlock_unlimited=True,
            acs_redirect_bridges=[],
            modules=["nvidia", "nvidia_peermem"],
            xid_events=[],
        ),
        software=Software(
            driver_version="550.54.15",
            cuda_driver_version="12.4",
            python_version="3.11.9",
            torch_version="2.5.1+cu124",
            torch_build="cuda",
            torch_cuda="12.4",
            torch_nccl="2.21.5",
            nvcc_version="12.4",
            nccl_system_version="2.21.5",
            container_runtimes=["docker 27.1.1"],
            nvidia_container_toolkit="1.16.1",
            services={
                "nvidia-persistenced": "active",
                "nvidia-fabricmanager": "active",
                "nvidia-dcgm": "active",
            },
        ),
        monitoring=Monitoring(dcgm_version="3.3.6", agents_running=["nv-hostengine", "dcgm-exporter"]),
        platform=Platform(
            virtualization="none",
            container="none",
            environment="onprem",
            environment_reason="bare metal (test)",
        ),
    )


def cpu_vm() -> Facts:
    """A CPU-only cloud VM, like the machine the tests run on."""
    return Facts(
        gpu_probe=GpuProbe(source="none", error="NVML init failed: NVML Shared Library Not Found"),
        cpu=Cpu(threads=2, cores=2, numa_nodes=1),
        memory=Memory(total_bytes=24 * GIB, swap_total_bytes=0),
        storage=Storage(shm_bytes=12 * GIB),
        kernel=Kernel(memlock_unlimited=False, memlock_bytes=8 * 2**20, acs_redirect_bridges=[]),
        platform=Platform(
            virtualization="kvm",
            container="none",
            environment="cloud",
            environment_reason="kvm guest (test)",
        ),
    )


def expectation_node(gpus: int = 8, ib_active: int = 4, driver: str = "550.54.14", width: int = 16) -> Facts:
    """A small node for `--expect` and drift tests: GPUs (GPU 0's link `width` wide), four IB ports
    (`ib_active` of them up) and a driver version."""
    ports = [RdmaPort(port=1, state="ACTIVE" if i < ib_active else "DOWN") for i in range(4)]
    return Facts(
        gpus=[Gpu(index=i, pcie=PcieLink(width_current=width if i == 0 else 16)) for i in range(gpus)],
        network=Network(rdma_devices=[RdmaDevice(name=f"mlx5_{i}", ports=[p]) for i, p in enumerate(ports)]),
        software=Software(driver_version=driver),
    )


def bench(*results: Measurement) -> BenchReport:
    return BenchReport(results=list(results))


def measurement(
    name: str,
    layer: str,
    value: float,
    peak: float,
    achievable: float | None = None,
    unit: str = "GB/s",
    device: str = "cuda:0",
) -> Measurement:
    pct = 100.0 * value / peak
    return Measurement(
        name=name,
        layer=layer,
        device=device,
        value=value,
        unit=unit,
        peak=peak,
        percent_of_peak=pct,
        achievable_fraction=achievable,
        percent_of_achievable=(pct / achievable) if achievable else None,
    )
