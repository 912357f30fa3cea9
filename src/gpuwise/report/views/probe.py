"""`gpuwise probe`: Facts as a readable summary, grouped by the eight layers."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from gpuwise import units
from gpuwise.facts.models import Facts, Part
from gpuwise.layers import PROBE_LAYERS
from gpuwise.report.document import (
    Block,
    Cell,
    Column,
    Document,
    Heading,
    KeyValues,
    Paragraph,
    Styled,
    Table,
)

PSEUDO_FS = {
    "proc",
    "sysfs",
    "devpts",
    "cgroup",
    "cgroup2",
    "mqueue",
    "securityfs",
    "debugfs",
    "tracefs",
    "pstore",
    "bpf",
    "configfs",
    "fusectl",
    "hugetlbfs",
    "autofs",
    "binfmt_misc",
    "rpc_pipefs",
    "devtmpfs",
    "nsfs",
}
v = units.value


def _reason(part: Part | None, field: str | None) -> str | None:
    """Why a field is unknown, in words (the reason's `text`; its `kind` is for code)."""
    if part is None or field is None:
        return None
    why = part.unknown.get(field)
    return why.text if why is not None else None


def _kv(rows: Iterable[tuple], part: Part | None = None, title: str | None = None) -> KeyValues:
    """Rows are (label, value) or (label, value, field): an unknown value shows the field's reason."""
    out: list[tuple[str, Cell]] = []
    for label, value, *field in rows:
        reason = _reason(part, field[0] if field else None)
        if value is None and reason:
            out.append((label, Styled(f"{units.UNKNOWN} ({reason})", "dim")))
        else:
            out.append((label, value if isinstance(value, (str, Styled)) else v(value)))
    return KeyValues(out, title=title)


def _gpus(f: Facts) -> list[Block]:
    p = f.gpu_probe
    head = f"GPUs: {len(f.gpus)} via {p.source}"
    if p.attached_gpus is not None and p.attached_gpus != len(f.gpus):
        head += f" (tool reports {p.attached_gpus} attached)"
    out: list[Block] = [Paragraph(head, "bold")]
    if p.error and not any(p.error in n for n in p.notes):
        out.append(Paragraph(f"GPU probe: {p.error}", "warn"))
    out += [Paragraph(n, "dim") for n in p.notes]
    out += [Paragraph(f"nvidia-smi: {w}", "warn") for w in p.warnings]
    if not f.gpus:
        return out
    cols = [Column("#", "right"), Column("name"), Column("memory", "right"), Column("PCIe now/max")]
    cols += [Column("power", "right"), Column("persist"), Column("ECC"), Column("MIG")]
    cols += [Column("temp", "right"), Column("clock events")]
    rows = []
    for g in f.gpus:
        pcie = g.pcie
        link = f"{v(pcie.gen_current)}x{v(pcie.width_current)}/{v(pcie.gen_max)}x{v(pcie.width_max)}"
        rows.append(
            [
                v(g.index),
                v(g.name),
                units.size(g.memory_total_bytes),
                link,
                units.number(g.power_limit_watts, 1, "W"),
                v(g.persistence_mode),
                v(g.ecc_enabled),
                v(g.mig_enabled),
                units.number(g.temperature_c, 1, "C"),
                v(g.clock_event_reasons),
            ]
        )
    out.append(Table(cols, rows))
    for g in f.gpus:
        if g.error:
            out.append(Paragraph(f"GPU {g.index}: {g.error}", "fail"))
        out += [Paragraph(f"GPU {g.index}: {w}", "warn") for w in g.warnings]
    return out


def _topology(f: Facts) -> list[Block]:
    topo = f.topology
    if not topo.gpu_links:
        return []
    cols = [Column("")] + [Column(c) for c in topo.gpu_names + topo.nic_names]
    cols += [Column("CPU affinity"), Column("NUMA")]
    rows = []
    for i, name in enumerate(topo.gpu_names):
        row = list(topo.gpu_links[i]) if i < len(topo.gpu_links) else []
        if topo.gpu_nic_links and i < len(topo.gpu_nic_links):
            row += topo.gpu_nic_links[i]
        cpu = topo.gpu_cpu_affinity[i] if topo.gpu_cpu_affinity and i < len(topo.gpu_cpu_affinity) else None
        numa = (
            topo.gpu_numa_affinity[i] if topo.gpu_numa_affinity and i < len(topo.gpu_numa_affinity) else None
        )
        rows.append([v(name), *map(v, row), v(cpu), v(numa)])
    out: list[Block] = [Table(cols, rows, title="Topology (nvidia-smi topo -m)")]
    if topo.nic_devices:
        out.append(Paragraph("NICs: " + ", ".join(f"{k}={x}" for k, x in topo.nic_devices.items())))
    for g in topo.nvlinks or []:
        down = [str(link.link) for link in g.links if not link.active]
        if down:
            out.append(Paragraph(f"GPU {g.gpu_index}: NVLink links inactive: {', '.join(down)}", "warn"))
    return out


def _network(f: Facts) -> list[Block]:
    n = f.network
    cols = [Column("NIC"), Column("state"), Column("speed", "right"), Column("MTU", "right")]
    cols += [Column("driver"), Column("IPv4")]
    rows = [
        [
            v(nic.name) + (" (virtual)" if nic.virtual else ""),
            v(nic.state),
            units.number(None if nic.speed_mbps is None else nic.speed_mbps / 1000, 3, "Gb/s"),
            v(nic.mtu),
            v(nic.driver),
            v(nic.ipv4),
        ]
        for nic in n.nics
    ]
    out: list[Block] = [Table(cols, rows, title="Network")]
    if n.rdma_devices:
        cols = [Column("HCA"), Column("port", "right"), Column("state"), Column("rate", "right")]
        cols.append(Column("link layer"))
        rows = [
            [v(d.name), str(p.port), v(p.state), units.number(p.rate_gbps, 1, "Gb/s"), v(p.link_layer)]
            for d in n.rdma_devices
            for p in d.ports
        ]
        out.append(Table(cols, rows, title=f"RDMA ({n.rdma_source})"))
    else:
        why = _reason(n, "rdma_devices")
        out.append(Paragraph("RDMA devices: none" + (f" ({why})" if why else "")))
    out.append(
        _kv(
            [
                ("nvidia_peermem loaded", n.nvidia_peermem_loaded, "nvidia_peermem_loaded"),
                ("/etc/nccl.conf", n.nccl_conf if n.nccl_conf is not None else "absent"),
                ("NCCL_* environment", ", ".join(f"{k}={x}" for k, x in n.nccl_env.items()) or "none"),
            ],
            n,
        )
    )
    return out


def _disk_kind(b) -> str:
    if b.nvme:
        return "NVMe"
    return "rotational" if b.rotational else "SSD" if b.rotational is False else units.UNKNOWN


def _storage(f: Facts) -> list[Block]:
    s = f.storage
    cols = [Column("mount"), Column("device"), Column("fs"), Column("size", "right"), Column("free", "right")]
    cols.append(Column("kind"))
    rows = [
        [
            v(m.mountpoint),
            v(m.device),
            v(m.fstype),
            units.size(m.total_bytes),
            units.size(m.free_bytes),
            "network" if m.network else "local",
        ]
        for m in s.mounts
        if m.fstype not in PSEUDO_FS
    ]
    disks = ", ".join(f"{b.name} ({_disk_kind(b)}, {units.size(b.size_bytes)})" for b in s.block_devices)
    md = ", ".join(f"{a.name} {a.level or ''} [{' '.join(a.devices)}]" for a in s.md_arrays) or "none"
    md = md if s.md_arrays or "md_arrays" not in s.unknown else None
    shm = units.size(s.shm_bytes) if s.shm_bytes is not None else None
    return [
        Table(cols, rows, title="Storage"),
        _kv(
            [
                ("block devices", disks or "none"),
                ("md RAID", md, "md_arrays"),
                ("/dev/shm", shm, "shm_bytes"),
            ],
            s,
        ),
    ]


def _hardware(f: Facts) -> list[Block]:
    cpu, mem = f.cpu, f.memory
    rows = [
        ("CPU", cpu.model, "model"),
        ("cores", f"{v(cpu.cores)} cores, {v(cpu.threads)} threads, {v(cpu.sockets)} socket(s)"),
        ("max clock", None if cpu.max_mhz is None else units.number(cpu.max_mhz, 0, "MHz"), "max_mhz"),
        ("NUMA nodes", cpu.numa_nodes, "numa_nodes"),
        ("governor", cpu.governor, "governor"),
        ("memory", units.size(mem.total_bytes)),
        ("swap", units.size(mem.swap_total_bytes)),
        ("hugepages", mem.hugepages_total),
    ]
    return [*_gpus(f), *_topology(f), _kv(rows, cpu, "CPU and memory")]


def _sections(f: Facts) -> dict[str, Callable[[], list[Block]]]:
    p, sw, k = f.platform, f.software, f.kernel
    memlock = (
        "unlimited"
        if k.memlock_unlimited
        else (None if k.memlock_bytes is None else f"{k.memlock_bytes:,} bytes")
    )
    system = " ".join(x for x in (p.sys_vendor, p.product_name) if x) or None
    cgroup_memory = units.size(p.cgroup_memory_limit_bytes) if p.cgroup_memory_limit_bytes else None
    return {
        "hardware": lambda: _hardware(f),
        "driver-cuda": lambda: [
            _kv(
                [
                    ("driver", sw.driver_version, "driver_version"),
                    ("CUDA (driver)", sw.cuda_driver_version, "cuda_driver_version"),
                    ("services", ", ".join(f"{u}={s}" for u, s in sw.services.items()) or "none"),
                ],
                sw,
                "Driver and CUDA",
            )
        ],
        "network": lambda: _network(f),
        "storage": lambda: _storage(f),
        "isolation": lambda: [
            _kv(
                [
                    ("virtualization", p.virtualization, "virtualization"),
                    ("container", p.container, "container"),
                    ("cloud", p.cloud_provider, "cloud_provider"),
                    ("instance type", p.instance_type, "instance_type"),
                    ("system", system, "sys_vendor"),
                    ("cgroup CPU limit", p.cgroup_cpu_limit, "cgroup_cpu_limit"),
                    ("cgroup memory limit", cgroup_memory, "cgroup_memory_limit_bytes"),
                ],
                p,
                "Platform and isolation",
            )
        ],
        "monitoring": lambda: [
            _kv(
                [
                    ("DCGM", f.monitoring.dcgm_version, "dcgm_version"),
                    ("agents running", f.monitoring.agents_running),
                ],
                f.monitoring,
                "Monitoring",
            )
        ],
        "toolchain": lambda: [
            _kv(
                [
                    ("python", sw.python_version, "python_version"),
                    ("torch", sw.torch_version, "torch_version"),
                    ("torch CUDA", sw.torch_cuda, "torch_cuda"),
                    ("torch cuDNN", sw.torch_cudnn, "torch_cudnn"),
                    ("torch NCCL", sw.torch_nccl, "torch_nccl"),
                    ("nvcc", sw.nvcc_version, "nvcc_version"),
                    ("system NCCL", sw.nccl_system_version, "nccl_system_version"),
                    ("containers", sw.container_runtimes),
                    ("NVIDIA container toolkit", sw.nvidia_container_toolkit, "nvidia_container_toolkit"),
                ],
                sw,
                "Toolchain",
            )
        ],
        "kernel": lambda: [
            _kv(
                [
                    ("kernel", k.release, "release"),
                    ("distro", k.distro, "distro"),
                    ("IOMMU", k.iommu, "iommu"),
                    ("THP", f"enabled={v(k.thp_enabled)} defrag={v(k.thp_defrag)}"),
                    ("memlock", memlock),
                    ("ACS redirect bridges", k.acs_redirect_bridges, "acs_redirect_bridges"),
                    *sorted(k.sysctl.items()),
                ],
                k,
                "Kernel and OS",
            )
        ],
    }


def probe_data(f: Facts, layer: str | None = None) -> dict:
    """The gpuwise-facts/1 JSON document; with `layer`, only that layer's parts (plus schema and meta)."""
    data = f.to_json_dict()
    if layer:
        keep = {"schema", "meta", *PROBE_LAYERS[layer]}
        data = {k: x for k, x in data.items() if k in keep}
    return data


def probe_view(f: Facts, layer: str | None = None) -> Document:
    """The probe summary; `layer` limits it to one of the eight layers."""
    p = f.platform
    title = f"gpuwise probe — {f.meta.hostname or units.UNKNOWN} ({f.meta.source})"
    blocks: list[Block] = [
        Heading(title),
        KeyValues([("environment", f"{p.environment} — {p.environment_reason or 'no evidence'}")]),
    ]
    for name, build in _sections(f).items():
        if layer and name != layer:
            continue
        blocks.append(Heading(name, level=2))
        blocks += build()
    return Document(title=title, blocks=blocks, data=probe_data(f, layer))
