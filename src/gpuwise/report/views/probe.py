"""`gpuwise probe`: Facts as a readable summary, grouped by the eight layers."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from gpuwise import units
from gpuwise.facts.models import Facts, Part
from gpuwise.i18n import C_, _, shows, worded
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


def v(x) -> str:
    """units.value in the active language: yes/no for booleans, 'none' for an empty list."""
    if isinstance(x, bool):
        return C_("boolean", "yes") if x else C_("boolean", "no")
    if isinstance(x, (list, tuple)):
        return ", ".join(map(v, x)) if x else C_("list", "none")
    return units.value(x)


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
            out.append(
                (label, Styled(_("{unknown} ({reason})").format(unknown=units.UNKNOWN, reason=reason), "dim"))
            )
        else:
            out.append((label, value if isinstance(value, (str, Styled)) else v(value)))
    return KeyValues(out, title=title)


def _gpus(f: Facts) -> list[Block]:
    p = f.gpu_probe
    head = _("GPUs: {count} via {source}").format(count=len(f.gpus), source=p.source)
    if p.attached_gpus is not None and p.attached_gpus != len(f.gpus):
        head += " " + _("(tool reports {attached} attached)").format(attached=p.attached_gpus)
    out: list[Block] = [Paragraph(head, "bold")]
    if p.error and not any(p.error in n for n in p.notes):
        out.append(Paragraph(_("GPU probe: {error}").format(error=p.error), "warn"))
    out += [Paragraph(n, "dim") for n in p.notes]
    out += [Paragraph(f"nvidia-smi: {w}", "warn") for w in p.warnings]
    if not f.gpus:
        return out
    cols = [Column("#", "right"), Column(_("name")), Column(C_("gpu", "memory"), "right")]
    cols += [Column(_("PCIe now/max")), Column(_("power"), "right"), Column(_("persist"))]
    cols += [Column("ECC"), Column("MIG"), Column(_("temp"), "right"), Column(_("clock events"))]
    rows = []
    for g in f.gpus:
        pcie = g.pcie
        link = f"{v(pcie.gen_current)}x{v(pcie.width_current)}/{v(pcie.gen_max)}x{v(pcie.width_max)}"
        rows.append(
            [
                v(g.index),
                v(g.name),
                units.gib(g.memory_total_bytes),
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
    cols += [Column(_("CPU affinity")), Column("NUMA")]
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
    out: list[Block] = [
        Table(cols, rows, title=_("Topology ({command})").format(command="nvidia-smi topo -m"))
    ]
    if topo.nic_devices:
        nics = ", ".join(f"{k}={x}" for k, x in topo.nic_devices.items())
        out.append(Paragraph(_("NICs: {nics}").format(nics=nics)))
    for g in topo.nvlinks or []:
        down = [str(link.link) for link in g.links if not link.active]
        if down:
            text = _("GPU {index}: NVLink links inactive: {links}").format(
                index=g.gpu_index, links=", ".join(down)
            )
            out.append(Paragraph(text, "warn"))
    return out


def _network(f: Facts) -> list[Block]:
    n = f.network
    cols = [Column(_("NIC")), Column(_("state")), Column(_("speed"), "right"), Column("MTU", "right")]
    cols += [Column(_("driver")), Column("IPv4")]
    rows = [
        [
            _("{name} (virtual)").format(name=v(nic.name)) if nic.virtual else v(nic.name),
            v(nic.state),
            units.number(None if nic.speed_mbps is None else nic.speed_mbps / 1000, 3, "Gb/s"),
            v(nic.mtu),
            v(nic.driver),
            v(nic.ipv4),
        ]
        for nic in n.nics
    ]
    out: list[Block] = [Table(cols, rows, title=_("Network"))]
    if n.rdma_devices:
        cols = [Column("HCA"), Column(_("port"), "right"), Column(_("state")), Column(_("rate"), "right")]
        cols.append(Column(_("link layer")))
        rows = [
            [v(d.name), str(p.port), v(p.state), units.number(p.rate_gbps, 1, "Gb/s"), v(p.link_layer)]
            for d in n.rdma_devices
            for p in d.ports
        ]
        out.append(Table(cols, rows, title=f"RDMA ({n.rdma_source})"))
    else:
        why = _reason(n, "rdma_devices")
        none = _("RDMA devices: none ({reason})").format(reason=why) if why else _("RDMA devices: none")
        out.append(Paragraph(none))
    out.append(
        _kv(
            [
                (_("nvidia_peermem loaded"), n.nvidia_peermem_loaded, "nvidia_peermem_loaded"),
                (
                    "/etc/nccl.conf",
                    _("absent")
                    if n.nccl_conf is None
                    else ", ".join(f"{k}={x}" for k, x in n.nccl_conf.items()) or C_("list", "none"),
                ),
                (
                    _("NCCL_* environment"),
                    ", ".join(f"{k}={x}" for k, x in n.nccl_env.items()) or C_("list", "none"),
                ),
            ],
            n,
        )
    )
    return out


def _disk_kind(b) -> str:
    if b.nvme:
        return "NVMe"
    return _("rotational") if b.rotational else "SSD" if b.rotational is False else units.UNKNOWN


def _storage(f: Facts) -> list[Block]:
    s = f.storage
    cols = [Column(_("mount")), Column(_("device")), Column(_("fs")), Column(_("size"), "right")]
    cols += [Column(_("free"), "right"), Column(_("kind"))]
    rows = [
        [
            v(m.mountpoint),
            v(m.device),
            v(m.fstype),
            units.size(m.total_bytes),
            units.size(m.free_bytes),
            C_("storage", "network") if m.network else _("local"),
        ]
        for m in s.mounts
        if m.fstype not in PSEUDO_FS
    ]
    disks = ", ".join(f"{b.name} ({_disk_kind(b)}, {units.size(b.size_bytes)})" for b in s.block_devices)
    md = ", ".join(f"{a.name} {a.level or ''} [{' '.join(a.devices)}]" for a in s.md_arrays) or C_(
        "list", "none"
    )
    md = md if s.md_arrays or "md_arrays" not in s.unknown else None
    shm = units.size(s.shm_bytes) if s.shm_bytes is not None else None
    return [
        Table(cols, rows, title=_("Storage")),
        _kv(
            [
                (_("block devices"), disks or C_("list", "none")),
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
        (
            _("cores"),
            _("{cores} cores, {threads} threads, {sockets} socket(s)").format(
                cores=v(cpu.cores), threads=v(cpu.threads), sockets=v(cpu.sockets)
            ),
        ),
        (_("max clock"), None if cpu.max_mhz is None else units.number(cpu.max_mhz, 0, "MHz"), "max_mhz"),
        (_("NUMA nodes"), cpu.numa_nodes, "numa_nodes"),
        (_("governor"), cpu.governor, "governor"),
        (C_("host", "memory"), units.gib(mem.total_bytes)),
        (_("swap"), units.size(mem.swap_total_bytes)),
        (_("hugepages"), mem.hugepages_total),
    ]
    return [*_gpus(f), *_topology(f), _kv(rows, cpu, _("CPU and memory"))]


def _sections(f: Facts) -> dict[str, Callable[[], list[Block]]]:
    p, sw, k = f.platform, f.software, f.kernel
    memlock = (
        _("unlimited")
        if k.memlock_unlimited
        else (None if k.memlock_bytes is None else _("{bytes} bytes").format(bytes=f"{k.memlock_bytes:,}"))
    )
    system = " ".join(x for x in (p.sys_vendor, p.product_name) if x) or None
    cgroup_memory = units.size(p.cgroup_memory_limit_bytes) if p.cgroup_memory_limit_bytes else None
    return {
        "hardware": lambda: _hardware(f),
        "driver-cuda": lambda: [
            _kv(
                [
                    (_("driver"), sw.driver_version, "driver_version"),
                    (_("CUDA (driver)"), sw.cuda_driver_version, "cuda_driver_version"),
                    (
                        _("services"),
                        ", ".join(f"{u}={s}" for u, s in sw.services.items()) or C_("list", "none"),
                    ),
                ],
                sw,
                _("Driver and CUDA"),
            )
        ],
        "network": lambda: _network(f),
        "storage": lambda: _storage(f),
        "isolation": lambda: [
            _kv(
                [
                    (_("virtualization"), p.virtualization, "virtualization"),
                    (_("container"), p.container, "container"),
                    (C_("provider", "cloud"), p.cloud_provider, "cloud_provider"),
                    (_("instance type"), p.instance_type, "instance_type"),
                    (_("system"), system, "sys_vendor"),
                    (_("cgroup CPU limit"), p.cgroup_cpu_limit, "cgroup_cpu_limit"),
                    (_("cgroup memory limit"), cgroup_memory, "cgroup_memory_limit_bytes"),
                ],
                p,
                _("Platform and isolation"),
            )
        ],
        "monitoring": lambda: [
            _kv(
                [
                    ("DCGM", f.monitoring.dcgm_version, "dcgm_version"),
                    (_("agents running"), f.monitoring.agents_running),
                ],
                f.monitoring,
                _("Monitoring"),
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
                    (_("system NCCL"), sw.nccl_system_version, "nccl_system_version"),
                    (_("containers"), sw.container_runtimes),
                    ("NVIDIA container toolkit", sw.nvidia_container_toolkit, "nvidia_container_toolkit"),
                ],
                sw,
                _("Toolchain"),
            )
        ],
        "kernel": lambda: [
            _kv(
                [
                    (_("kernel"), k.release, "release"),
                    (_("distro"), k.distro, "distro"),
                    ("IOMMU", k.iommu, "iommu"),
                    ("THP", f"enabled={v(k.thp_enabled)} defrag={v(k.thp_defrag)}"),
                    ("memlock", memlock),
                    (_("ACS redirect bridges"), k.acs_redirect_bridges, "acs_redirect_bridges"),
                    *sorted(k.sysctl.items()),
                ],
                k,
                _("Kernel and OS"),
            )
        ],
    }


def _environment_word(kind: str | None) -> str:
    """The environment kind (an enum value; the JSON keeps it) as a reader says it."""
    words = {
        "cloud": C_("environment", "cloud"),
        "onprem": C_("environment", "onprem"),
        "unknown": C_("environment", "unknown"),
    }
    return words.get(kind or "unknown", str(kind))


def probe_data(f: Facts, layer: str | None = None) -> dict:
    """The gpuwise-facts/1 JSON document; with `layer`, only that layer's parts (plus schema and meta)."""
    data = f.to_json_dict()
    if layer:
        keep = {"schema", "meta", *PROBE_LAYERS[layer]}
        data = {k: x for k, x in data.items() if k in keep}
    return data


@shows
def probe_view(f: Facts, layer: str | None = None) -> Document:
    """The probe summary; `layer` limits it to one of the eight layers."""
    data = probe_data(f, layer)  # from the model as it is: JSON stays English under every --lang
    f = worded(f)
    p = f.platform
    reason = p.environment_reason or _("no evidence")
    title = f"gpuwise probe — {f.meta.hostname or units.UNKNOWN} ({f.meta.source})"
    blocks: list[Block] = [
        Heading(title),
        KeyValues([(_("environment"), f"{_environment_word(p.environment)} — {reason}")]),
    ]
    for name, build in _sections(f).items():
        if layer and name != layer:
            continue
        blocks.append(Heading(name, level=2))
        blocks += build()
    return Document(title=title, blocks=blocks, data=data)
