"""Render Facts as a readable Rich summary, grouped by the eight layers."""

from __future__ import annotations

from collections.abc import Iterable

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from gpuwise.facts.models import Facts, Part

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


def _fmt(value) -> str:
    if value is None:
        return "[dim]unknown[/]"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return escape(", ".join(map(str, value))) if value else "none"
    return escape(str(value))


def gib(n: int | None) -> str:
    return "[dim]unknown[/]" if n is None else f"{n / 2**30:,.1f} GiB"


def _m(markup: str) -> Text:
    """Text gpuwise formatted itself, with Rich markup (its fact parts already escaped)."""
    return Text.from_markup(markup)


def _kv(title: str, rows: Iterable[tuple], part: Part | None = None) -> Table:
    """Key/value rows. A row is (label, value) or (label, value, field): an unknown value whose
    field has a recorded reason shows the reason inline. A str value prints literally (facts can hold
    '[...]'); a value gpuwise formatted with markup is passed as Text (see _m)."""
    t = Table(title=title, title_justify="left", show_header=False, box=None, padding=(0, 2))
    t.add_column(style="bold")
    t.add_column()
    for label, value, *field in rows:
        reason = part.unknown.get(field[0]) if part is not None and field else None
        if value is None and reason:
            t.add_row(escape(label), f"[dim]unknown: {escape(reason)}[/]")
        else:
            t.add_row(escape(label), value if isinstance(value, Text) else _fmt(value))
    return t


def _gpus(f: Facts) -> list:
    out = []
    p = f.gpu_probe
    head = f"GPUs: {len(f.gpus)} via {escape(str(p.source))}"
    if p.attached_gpus is not None and p.attached_gpus != len(f.gpus):
        head += f" (tool reports {p.attached_gpus} attached)"
    out.append(head)
    if p.error and not any(p.error in n for n in p.notes):
        out.append(f"[yellow]GPU probe: {escape(p.error)}[/]")
    out.extend(f"[dim]{escape(n)}[/]" for n in p.notes)
    if not f.gpus:
        return out
    # light borders and collapsed padding so the table fits 80 columns; PCIe as gen x width, now/max
    t = Table(box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for col in ("#", "name", "memory", "PCIe now/max", "power", "persist", "ECC", "MIG", "temp"):
        t.add_column(col, no_wrap=col != "name")
    t.add_column("clock events")
    for g in f.gpus:
        pcie = g.pcie
        link = (
            f"{_fmt(pcie.gen_current)}x{_fmt(pcie.width_current)}/{_fmt(pcie.gen_max)}x{_fmt(pcie.width_max)}"
        )
        t.add_row(
            _fmt(g.index),
            _fmt(g.name),
            gib(g.memory_total_bytes),
            link,
            "[dim]unknown[/]" if g.power_limit_watts is None else f"{g.power_limit_watts:g} W",
            _fmt(g.persistence_mode),
            _fmt(g.ecc_enabled),
            _fmt(g.mig_enabled),
            "[dim]unknown[/]" if g.temperature_c is None else f"{g.temperature_c:g} C",
            _fmt(g.clock_event_reasons),
        )
    out.append(t)
    for g in f.gpus:
        if g.error:
            out.append(f"[red]GPU {g.index}: {escape(g.error)}[/]")
        out.extend(f"[yellow]GPU {g.index}: {escape(w)}[/]" for w in g.warnings)
    return out


def _topology(f: Facts) -> list:
    topo = f.topology
    if not topo.gpu_links:
        return []
    cols = topo.gpu_names + topo.nic_names
    t = Table(
        "",
        *map(escape, cols),
        "CPU affinity",
        "NUMA",
        title="Topology (nvidia-smi topo -m)",
        title_justify="left",
    )
    for i, name in enumerate(topo.gpu_names):
        row = list(topo.gpu_links[i]) if i < len(topo.gpu_links) else []
        if topo.gpu_nic_links and i < len(topo.gpu_nic_links):
            row += topo.gpu_nic_links[i]
        cpu = topo.gpu_cpu_affinity[i] if topo.gpu_cpu_affinity and i < len(topo.gpu_cpu_affinity) else None
        numa = (
            topo.gpu_numa_affinity[i] if topo.gpu_numa_affinity and i < len(topo.gpu_numa_affinity) else None
        )
        t.add_row(_fmt(name), *map(_fmt, row), _fmt(cpu), _fmt(numa))
    out = [t]
    if topo.nic_devices:
        out.append("NICs: " + escape(", ".join(f"{k}={v}" for k, v in topo.nic_devices.items())))
    for g in topo.nvlinks or []:
        down = [str(link.link) for link in g.links if not link.active]
        if down:
            out.append(f"[yellow]GPU {g.gpu_index}: NVLink links inactive: {', '.join(down)}[/]")
    return out


def _network(f: Facts) -> list:
    n = f.network
    t = Table("NIC", "state", "speed", "MTU", "driver", "IPv4", title="Network", title_justify="left")
    for nic in n.nics:
        speed = "[dim]unknown[/]" if nic.speed_mbps is None else f"{nic.speed_mbps / 1000:g} Gb/s"
        t.add_row(
            _fmt(nic.name) + (" [dim](virtual)[/]" if nic.virtual else ""),
            _fmt(nic.state),
            speed,
            _fmt(nic.mtu),
            _fmt(nic.driver),
            _fmt(nic.ipv4),
        )
    out: list = [t]
    if n.rdma_devices:
        r = Table(
            "HCA",
            "port",
            "state",
            "rate",
            "link layer",
            title=f"RDMA ({escape(str(n.rdma_source))})",
            title_justify="left",
        )
        for d in n.rdma_devices:
            for p in d.ports:
                rate = "[dim]unknown[/]" if p.rate_gbps is None else f"{p.rate_gbps:g} Gb/s"
                r.add_row(_fmt(d.name), str(p.port), _fmt(p.state), rate, _fmt(p.link_layer))
        out.append(r)
    else:
        why = n.unknown.get("rdma_devices")
        out.append("RDMA devices: none" + (f" [dim]({escape(why)})[/]" if why else ""))
    out.append(
        _kv(
            "",
            [
                ("nvidia_peermem loaded", n.nvidia_peermem_loaded, "nvidia_peermem_loaded"),
                ("/etc/nccl.conf", n.nccl_conf if n.nccl_conf is not None else "absent"),
                ("NCCL_* environment", ", ".join(f"{k}={v}" for k, v in n.nccl_env.items()) or "none"),
            ],
            n,
        )
    )
    return out


def _disk_kind(b) -> str:
    if b.nvme:
        return "NVMe"
    return "rotational" if b.rotational else "SSD" if b.rotational is False else "?"


def _storage(f: Facts) -> list:
    s = f.storage
    t = Table("mount", "device", "fs", "size", "free", "kind", title="Storage", title_justify="left")
    for m in s.mounts:
        if m.fstype in PSEUDO_FS:
            continue
        t.add_row(
            _fmt(m.mountpoint),
            _fmt(m.device),
            _fmt(m.fstype),
            gib(m.total_bytes),
            gib(m.free_bytes),
            "network" if m.network else "local",
        )
    disks = ", ".join(f"{escape(b.name)} ({_disk_kind(b)}, {gib(b.size_bytes)})" for b in s.block_devices)
    md = ", ".join(f"{a.name} {a.level or ''} [{' '.join(a.devices)}]" for a in s.md_arrays) or "none"
    md = md if s.md_arrays or "md_arrays" not in s.unknown else None
    shm = _m(gib(s.shm_bytes)) if s.shm_bytes is not None else None
    return [
        t,
        _kv(
            "",
            [
                ("block devices", _m(disks) if disks else "none"),
                ("md RAID", md, "md_arrays"),
                ("/dev/shm", shm, "shm_bytes"),
            ],
            s,
        ),
    ]


def render_probe(f: Facts, layer: str | None = None, console: Console | None = None) -> None:
    """Print the probe summary. `layer` limits it to one of the eight layers."""
    c = console or Console()
    p, sw, k, cpu, mem = f.platform, f.software, f.kernel, f.cpu, f.memory
    c.print(f"[bold]gpuwise probe[/] — {escape(f.meta.hostname or '?')} ({escape(f.meta.source)})")
    c.print(
        f"[bold]environment:[/] {escape(str(p.environment))} — "
        f"{escape(p.environment_reason or 'no evidence')}"
    )
    sections = {
        "hardware": lambda: [
            *_gpus(f),
            *_topology(f),
            _kv(
                "CPU and memory",
                [
                    (
                        "CPU",
                        _m(
                            f"{_fmt(cpu.model)} — {_fmt(cpu.sockets)} socket(s), {_fmt(cpu.cores)} cores, "
                            f"{_fmt(cpu.threads)} threads"
                        ),
                    ),
                    ("max clock", None if cpu.max_mhz is None else f"{cpu.max_mhz:g} MHz", "max_mhz"),
                    ("NUMA nodes", cpu.numa_nodes, "numa_nodes"),
                    ("governor", cpu.governor, "governor"),
                    ("memory", _m(gib(mem.total_bytes))),
                    ("swap", _m(gib(mem.swap_total_bytes))),
                    ("hugepages", mem.hugepages_total),
                ],
                cpu,
            ),
        ],
        "driver-cuda": lambda: [
            _kv(
                "Driver and CUDA",
                [
                    ("driver", sw.driver_version, "driver_version"),
                    ("CUDA (driver)", sw.cuda_driver_version, "cuda_driver_version"),
                    ("services", ", ".join(f"{u}={s}" for u, s in sw.services.items()) or "none"),
                ],
                sw,
            )
        ],
        "network": lambda: _network(f),
        "storage": lambda: _storage(f),
        "isolation": lambda: [
            _kv(
                "Platform and isolation",
                [
                    ("virtualization", p.virtualization, "virtualization"),
                    ("container", p.container, "container"),
                    ("cloud", p.cloud_provider, "cloud_provider"),
                    ("instance type", p.instance_type, "instance_type"),
                    (
                        "system",
                        " ".join(x for x in (p.sys_vendor, p.product_name) if x) or None,
                        "sys_vendor",
                    ),
                    ("cgroup CPU limit", p.cgroup_cpu_limit, "cgroup_cpu_limit"),
                    (
                        "cgroup memory limit",
                        _m(gib(p.cgroup_memory_limit_bytes)) if p.cgroup_memory_limit_bytes else None,
                        "cgroup_memory_limit_bytes",
                    ),
                ],
                p,
            )
        ],
        "monitoring": lambda: [
            _kv(
                "Monitoring",
                [
                    ("DCGM", f.monitoring.dcgm_version, "dcgm_version"),
                    ("agents running", f.monitoring.agents_running),
                ],
                f.monitoring,
            )
        ],
        "toolchain": lambda: [
            _kv(
                "Toolchain",
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
            )
        ],
        "kernel": lambda: [
            _kv(
                "Kernel and OS",
                [
                    ("kernel", k.release, "release"),
                    ("distro", k.distro, "distro"),
                    ("IOMMU", k.iommu, "iommu"),
                    ("THP", _m(f"enabled={_fmt(k.thp_enabled)} defrag={_fmt(k.thp_defrag)}")),
                    (
                        "memlock",
                        "unlimited"
                        if k.memlock_unlimited
                        else (None if k.memlock_bytes is None else f"{k.memlock_bytes:,} bytes"),
                    ),
                    ("ACS redirect bridges", k.acs_redirect_bridges, "acs_redirect_bridges"),
                    *sorted(k.sysctl.items()),
                ],
                k,
            )
        ],
    }
    for name, build in sections.items():
        if layer and name != layer:
            continue
        c.rule(f"[bold]{name}[/]", align="left")
        for item in build():
            c.print(item)
