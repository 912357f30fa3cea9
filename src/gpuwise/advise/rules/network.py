"""Network rules (layer: network): RDMA presence and port health, GPUDirect RDMA, NCCL settings, MTU.
Sources: REFERENCE §5 (GPUDirect RDMA, IB/RoCE state, MTU), §6 #39-#46, §7 (System vs Debugging classes)."""

from __future__ import annotations

from gpuwise.advise.controls import CLOUD_FABRIC, cloud_only, provider_owned
from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.finding import Controllable, ExpectedGain
from gpuwise.advise.rules._links import (
    AREAL_639,
    AWS_PLACEMENT,
    AZURE_NHC,
    GPU_OPERATOR_RDMA,
    NCCL_209,
    NCCL_ENV,
    OFED_TUNING,
)
from gpuwise.advise.rules._util import (
    RDMA_GAIN,
    nccl_setting,
    physical_nics,
    version_tuple,
)
from gpuwise.catalog.efa import efa_support
from gpuwise.facts.fabric import port_roles
from gpuwise.i18n import N_, joined, msg


def _ports(ctx: RuleContext):
    for dev in ctx.facts.network.rdma_devices:
        for port in dev.ports:
            yield f"network.rdma_devices[{dev.name}].ports[{port.port}]", dev, port


@rule(
    id="net.no_rdma",
    layer="network",
    title=N_("No RDMA network (InfiniBand/RoCE) for multi-node training"),
    source=f"NCCL over sockets instead of InfiniBand/RoCE: ~4-5x slower collectives (AReaL issue #639, {AREAL_639}); NCCL environment variables, {NCCL_ENV}",
    priority={"cloud": "medium", "onprem": "high"},
    controllable=CLOUD_FABRIC,
    gain=RDMA_GAIN,
)
def no_rdma(ctx: RuleContext):
    net = ctx.facts.network
    if not ctx.facts.gpus or net.rdma_devices:
        return None
    why = net.unknown.get("rdma_devices")
    if net.rdma_source is None and why is not None and why.kind == "not_captured":
        return None  # a source was never looked at: no claim that the node has no RDMA
    n = len(ctx.facts.gpus)
    many = n >= ctx.t("multinode_gpu_count")
    efa = efa_support(ctx.facts.platform.instance_type)
    if efa is not None:
        evidence = [
            ("network.rdma_devices", []),
            ("platform.instance_type", efa.instance_type),
            (f"catalog:efa_instance_types[{efa.instance_type}].efa_interfaces", efa.efa_interfaces),
        ]
        if efa.efa_interfaces:
            return ctx.finding(
                "warn",
                evidence,
                msg(
                    "This instance type supports {n} EFA adapters ({source}), but no RDMA device is "
                    "visible: multi-node NCCL would run over TCP. Attach EFA network interfaces when "
                    "launching the instances (InterfaceType efa) and pass /dev/infiniband to the container."
                ).format(n=efa.efa_interfaces, source=efa.source),
                commands=["ls /sys/class/infiniband", "fi_info -p efa -t FI_EP_RDM"],
            )
        return ctx.finding(
            "warn" if many else "info",
            evidence,
            msg(
                "This instance type has no EFA ({source}): multi-node NCCL runs over TCP. For multi-node "
                "training choose an EFA-capable instance type (e.g. p4d.24xlarge, p5.48xlarge)."
            ).format(source=efa.source),
        )
    return ctx.finding(
        "warn" if many else "info",
        [("network.rdma_devices", []), ("gpus.count", n)],
        msg(
            "Multi-node jobs on this node would run NCCL over TCP sockets. Single-node training is "
            "unaffected. For multi-node training use InfiniBand or RoCE NICs with GPUDirect RDMA "
            "(self-built) or an RDMA-capable instance type in one placement group (cloud); on TCP "
            "set NCCL_SOCKET_NTHREADS/NCCL_NSOCKS_PERTHREAD."
        ),
        commands=["ibv_devinfo", "ls /sys/class/infiniband"],
    )


@rule(
    id="net.cloud_placement",
    layer="network",
    title=N_("Multi-node on cloud: one availability zone and a placement group"),
    source=f"heuristic: collectives between availability zones pay 1-2 ms of latency each; cloud placement groups keep instances close (AWS EC2 placement groups, {AWS_PLACEMENT})",
    priority={"cloud": "high"},
    environments=("cloud",),
    controllable=cloud_only(
        Controllable(can="yes", reason=N_("placement is chosen when the instances are created"))
    ),
    gain=ExpectedGain(
        text=N_("avoids the 1-2 ms cross-zone latency on every collective"),
        source=f"heuristic: cross-zone latency 1-2 ms per collective (AWS EC2 placement groups, {AWS_PLACEMENT})",
    ),
)
def cloud_placement(ctx: RuleContext):
    if not ctx.facts.gpus:
        return None
    pf = ctx.facts.platform
    evidence = [
        ("platform.environment", pf.environment),
        ("platform.cloud_provider", pf.cloud_provider),
        ("platform.instance_type", pf.instance_type),
        ("network.rdma_devices", [d.name for d in ctx.facts.network.rdma_devices]),
    ]
    return ctx.finding(
        "info",
        evidence,
        msg(
            "If this instance trains with others, create all nodes in one availability zone and in a "
            "cluster placement group (or the provider's equivalent), and measure all-reduce busbw "
            "across the nodes before a long run: multi-node scaling on cloud networks is the largest "
            "gap to a self-built cluster."
        ),
        commands=["gpuwise bench --only collective --save bench.json   # on each node, then gpuwise compare"],
    )


@rule(
    id="net.rdma_port_down",
    layer="network",
    title=N_("RDMA ports are not active"),
    source=f"Azure HPC health checks check_hw_ib: all ports Active at rated speed, {AZURE_NHC}",
    priority="high",
    controllable=provider_owned(
        Controllable(
            can="no",
            reason=N_("the fabric belongs to the provider"),
            alternative=N_("restart/replace the instance and report the port to the provider"),
        )
    ),
)
def rdma_port_down(ctx: RuleContext):
    roles = port_roles(ctx.facts)
    all_ports = list(_ports(ctx))
    if not any(port.state for _p, _dev, port in all_ports):
        return None  # no port's state is known (ibdev2netdev alone lists interfaces, not port states)
    fabric = [(p, dev, port) for p, dev, port in all_ports if _is_compute(roles, dev, port)]
    down = [(p, dev, port) for p, dev, port in fabric if not _active(port)]
    other_down = [
        (p, dev, port)
        for p, dev, port in all_ports
        if not _is_compute(roles, dev, port) and not _active(port)
    ]
    if not down and not other_down:
        return ctx.passed(
            [("network.rdma_devices.ports.active", len(all_ports))], msg("all RDMA ports are active")
        )
    if not down:
        evidence = [(f"{p}.state", _port_text(dev, port, roles)) for p, dev, port in other_down]
        return ctx.finding(
            "info",
            evidence,
            msg(
                "These ports are down, but they are not the compute fabric (decided by: {why}); NCCL "
                "does not move gradients over them. Bring them up only if they carry management or "
                "storage traffic you need."
            ).format(why=joined(", ", sorted({roles[(d.name, pt.port)].why for _p, d, pt in other_down}))),
            title=msg("RDMA ports outside the compute fabric are down"),
            priority="low",
            commands=["ibstat", "ibdev2netdev"],
        )
    evidence = [(f"{p}.state", _port_text(dev, port, roles)) for p, dev, port in down]
    # Some fabric ports up and some down is a broken cable/port; all down may be an unused adapter.
    status = "fail" if len(down) < len(fabric) else "warn"
    return ctx.finding(
        status,
        evidence,
        msg(
            "Compute-fabric ports that are not ACTIVE carry no traffic: DOWN/POLLING means no link "
            "(cable, transceiver, switch port), INIT means the subnet manager has not configured it. "
            "If a port is unused on purpose, exclude it with NCCL_IB_HCA."
        ),
        commands=["ibstat", "ibv_devinfo -v", "sudo systemctl status opensm  # IB subnet manager"],
        env={"NCCL_IB_HCA": "=<active hca list>"},
    )


def _active(port) -> bool:
    return not port.state or port.state.upper() == "ACTIVE"


def _is_compute(roles, dev, port) -> bool:
    role = roles.get((dev.name, port.port))
    return role is None or role.compute


def _port_text(dev, port, roles) -> str:
    role = roles.get((dev.name, port.port))
    where = msg("compute fabric") if role is None or role.compute else msg("not compute fabric")
    why = f" ({role.why})" if role is not None else ""
    # plain ibv_devinfo prints no physical state
    state = joined(" / ", (s for s in (port.state, port.phys_state) if s)) or "?"
    return f"{state}; {dev.model or '?'} {port.link_layer or ''}; {where}{why}"


@rule(
    id="net.rdma_rate_below_peers",
    layer="network",
    title=N_("An RDMA port runs below the speed of its peers"),
    source=f"Azure HPC health checks check_hw_ib: all ports at rated speed, {AZURE_NHC}",
    priority={"cloud": "medium", "onprem": "high"},
    controllable=provider_owned(
        Controllable(
            can="no",
            reason=N_("the fabric belongs to the provider"),
            alternative=N_("report the port to the provider"),
        )
    ),
)
def rdma_rate(ctx: RuleContext):
    roles = port_roles(ctx.facts)
    active = [
        (p, dev, port)
        for p, dev, port in _ports(ctx)
        if port.rate_gbps and (port.state or "").upper() == "ACTIVE"
    ]
    # peers: the same device model, link layer and role; a 100G storage NIC is no peer of a 400G rail
    groups: dict[tuple[str, str, bool], list] = {}
    for row in active:
        _p, dev, port = row
        key = (dev.model or "", port.link_layer or "", _is_compute(roles, dev, port))
        groups.setdefault(key, []).append(row)
    slow, best_rates = [], []
    for (model, layer, _compute), rows in sorted(groups.items()):
        if len(rows) < 2:
            continue
        best = max(port.rate_gbps for _p, _dev, port in rows)
        behind = [(f"{p}.rate_gbps", port.rate_gbps) for p, _dev, port in rows if port.rate_gbps < best]
        if behind:
            slow += behind
            best_rates.append(
                (f"network.rdma_devices.ports.rate_gbps (best of {model or '?'} {layer})", best)
            )
    if not slow:
        return None
    return ctx.finding(
        "warn",
        slow + best_rates,
        msg(
            "A port that trained at a lower rate than its peers of the same model and role (bad cable "
            "or transceiver, wrong switch port configuration) slows every collective that uses it."
        ),
        commands=["ibstat", "mlxlink -d <dev> -m"],
    )


@rule(
    id="net.roce_gid_index",
    layer="network",
    title=N_("RoCE without an explicit NCCL GID index on an older NCCL"),
    source=f"NCCL environment variables, NCCL_IB_GID_INDEX (automatic selection since NCCL 2.21), {NCCL_ENV}",
    priority={"cloud": "medium", "onprem": "high"},
    references=(NCCL_ENV,),
)
def roce_gid(ctx: RuleContext):
    roles = port_roles(ctx.facts)
    roce = [
        p
        for p, dev, port in _ports(ctx)
        if (port.link_layer or "").lower() == "ethernet"
        and (port.state or "").upper() == "ACTIVE"
        and _is_compute(roles, dev, port)
    ]
    if not roce:
        return None  # no active RoCE port in the compute fabric: NCCL uses no GID here
    value, where = nccl_setting(ctx.facts, "NCCL_IB_GID_INDEX")
    if value is not None:
        return ctx.passed([(f"{where}.NCCL_IB_GID_INDEX", value)], msg("NCCL_IB_GID_INDEX is set for RoCE"))
    nccl = ctx.facts.software.torch_nccl or ctx.facts.software.nccl_system_version
    evidence = [(f"{roce[0]}.link_layer", "Ethernet"), ("NCCL_IB_GID_INDEX", None), ("NCCL version", nccl)]
    if not version_tuple(nccl):
        return ctx.finding(
            "info",
            evidence,
            msg(
                "The NCCL version is unknown, so whether NCCL picks the RoCE v2 GID by itself (2.21 and "
                'later) cannot be judged. Read the version (`python -c "import torch; '
                "print(torch.cuda.nccl.version())\"`, or NCCL_DEBUG=INFO's first line); on an older "
                "NCCL set NCCL_IB_GID_INDEX to the RoCE v2 IPv4 GID that `show_gids` lists."
            ),
            title=msg("RoCE compute fabric: NCCL version unknown, GID choice not judged"),
            priority="low",
            commands=["show_gids"],
        )
    auto = version_tuple(nccl) >= version_tuple(ctx.t("nccl_auto_gid_min_version"))
    return ctx.finding(
        "info" if auto else "warn",
        evidence,
        (
            msg(
                "NCCL picks the RoCE v2 GID automatically since 2.21; set NCCL_IB_GID_INDEX only if it "
                "picks a wrong one (RoCE v1 or IPv6 link-local)."
            )
            if auto
            else msg(
                "On RoCE an NCCL older than 2.21 may use a RoCE v1 or link-local GID: find the RoCE v2 "
                "IPv4 GID with `show_gids` and set NCCL_IB_GID_INDEX."
            )
        ),
        commands=["show_gids"],
        env={} if auto else {"NCCL_IB_GID_INDEX": "<index of the RoCE v2 IPv4 GID>"},
    )


@rule(
    id="net.peermem_missing",
    layer="network",
    title=N_("GPUDirect RDMA module (nvidia_peermem) is not loaded"),
    source=f"NVIDIA GPU Operator, 'GPUDirect RDMA' (nvidia-peermem or DMA-BUF), {GPU_OPERATOR_RDMA}",
    priority={"cloud": "medium", "onprem": "high"},
    controllable=cloud_only(
        Controllable(
            can="partly",
            reason=N_("the guest can load the module if the VM exposes the HCA with GPUDirect support"),
            alternative=N_("use the provider's RDMA image"),
        )
    ),
    references=(GPU_OPERATOR_RDMA,),
    gain=ExpectedGain(
        text=N_("NIC reads GPU memory directly instead of staging through host memory"),
        source=f"NVIDIA GPU Operator, 'GPUDirect RDMA', {GPU_OPERATOR_RDMA}",
    ),
)
def peermem(ctx: RuleContext):
    net = ctx.facts.network
    if not ctx.facts.gpus or not net.rdma_devices or net.nvidia_peermem_loaded is not False:
        return None
    return ctx.finding(
        "warn",
        [
            ("network.nvidia_peermem_loaded", False),
            ("network.rdma_devices", [d.name for d in net.rdma_devices]),
        ],
        msg(
            "Without nvidia_peermem NCCL cannot use GPUDirect RDMA through peer memory (look for "
            "GDRDMA in the NCCL INFO log). Load it, or use DMA-BUF on recent kernels and NCCL."
        ),
        commands=[
            "sudo modprobe nvidia_peermem",
            "echo nvidia_peermem | sudo tee /etc/modules-load.d/nvidia-peermem.conf",
        ],
        env={"NCCL_DMABUF_ENABLE": "1  # alternative on kernels/NCCL with DMA-BUF support"},
    )


@rule(
    id="net.nccl_debug_vars",
    layer="network",
    title=N_("NCCL 'Debugging' variables are set"),
    source=f"NCCL environment variables, 'Debugging' class: 'should not be used in production nor retained in scripts', {NCCL_ENV}",
    priority="medium",
    references=(NCCL_ENV,),
)
def nccl_debug_vars(ctx: RuleContext):
    names = ctx.t("nccl_debugging_vars")
    found = []
    for name in names:
        value, where = nccl_setting(ctx.facts, name)
        if value is not None:
            found.append((f"{where}.{name}", value))
    if not found:
        return None
    return ctx.finding(
        "warn",
        found,
        msg(
            "These variables override NCCL's automatic choices; the NCCL documentation classes them "
            "as debugging aids that can cause sub-optimal behaviour, hangs or (NCCL_PROTO enabling "
            "LL128) data corruption. Remove them unless an A/B test on this cluster proved a gain."
        ),
        commands=[
            "unset " + joined(" ", sorted({p.rsplit(".", 1)[1] for p, _value in found})),
            "grep -n NCCL_ /etc/nccl.conf ~/.nccl.conf 2>/dev/null",
        ],
    )


@rule(
    id="net.nccl_ib_disabled",
    layer="network",
    title=N_("NCCL_IB_DISABLE=1 on a node with active RDMA ports"),
    source=f"NCCL environment variables, NCCL_IB_DISABLE ({NCCL_ENV}); AReaL issue #639: ~4-5x slower collectives over sockets ({AREAL_639})",
    priority="high",
    gain=RDMA_GAIN,
    references=(NCCL_ENV,),
)
def nccl_ib_disabled(ctx: RuleContext):
    value, where = nccl_setting(ctx.facts, "NCCL_IB_DISABLE")
    roles = port_roles(ctx.facts)
    active = [
        p
        for p, dev, port in _ports(ctx)
        if (port.state or "").upper() == "ACTIVE" and _is_compute(roles, dev, port)
    ]
    if value is None or value.strip() in ("0", "") or not active:
        return None
    return ctx.finding(
        "fail",
        [(f"{where}.NCCL_IB_DISABLE", value), ("active RDMA ports", len(active))],
        msg("NCCL will use TCP sockets although RDMA ports are up. Unset NCCL_IB_DISABLE."),
        commands=["unset NCCL_IB_DISABLE"],
    )


@rule(
    id="net.nccl_socket_ifname",
    layer="network",
    title=N_("NCCL_SOCKET_IFNAME points at a loopback or container bridge"),
    source=f"NCCL environment variables, NCCL_SOCKET_IFNAME (the default skips lo and docker*), {NCCL_ENV}",
    priority="high",
    references=(NCCL_ENV,),
)
def nccl_socket_ifname(ctx: RuleContext):
    value, where = nccl_setting(ctx.facts, "NCCL_SOCKET_IFNAME")
    if not value or value.startswith("^"):
        return None
    bad_names = ctx.t("nccl_bad_socket_ifnames")
    chosen = [v.strip().lstrip("=") for v in value.split(",") if v.strip()]
    bad = [c for c in chosen if c in bad_names or c.startswith("docker")]
    if not bad:
        return None
    nics = [n.name for n in physical_nics(ctx.facts)]
    return ctx.finding(
        "fail",
        [(f"{where}.NCCL_SOCKET_IFNAME", value), ("network.nics (physical)", nics)],
        msg(
            "NCCL bootstraps (and, without RDMA, moves data) over the interface named here; lo or "
            "docker0 cannot reach other nodes and hangs multi-node init. Name the fast data NIC, or "
            "exclude: `^lo,docker`."
        ),
        env={"NCCL_SOCKET_IFNAME": f"={nics[0]}" if nics else "^lo,docker"},
    )


@rule(
    id="net.tcp_socket_threads",
    layer="network",
    title=N_("Fast TCP-only network without NCCL socket tuning"),
    source=f"NCCL environment variables, NCCL_SOCKET_NTHREADS / NCCL_NSOCKS_PERTHREAD ('for generic 100G networks ... set to 4'), {NCCL_ENV}",
    priority={"cloud": "medium", "onprem": "low"},
    references=(NCCL_ENV,),
    gain=ExpectedGain(
        text=N_("often substantially higher busbw on TCP (NCCL #209: 2.06 -> 3.75 GB/s)"),
        source=f"NCCL issue #209, {NCCL_209}",
    ),
)
def tcp_socket_threads(ctx: RuleContext):
    if not ctx.facts.gpus or ctx.facts.network.rdma_devices:
        return None
    fast = [n for n in physical_nics(ctx.facts) if (n.speed_mbps or 0) >= ctx.t("tcp_tuning_nic_mbps")]
    if not fast:
        return None
    threads, _where = nccl_setting(ctx.facts, "NCCL_SOCKET_NTHREADS")
    socks, _where2 = nccl_setting(ctx.facts, "NCCL_NSOCKS_PERTHREAD")
    if threads and socks:
        return None
    return ctx.finding(
        "info",
        [(f"network.nics[{n.name}].speed_mbps", n.speed_mbps) for n in fast]
        + [("NCCL_SOCKET_NTHREADS", threads), ("NCCL_NSOCKS_PERTHREAD", socks)],
        msg(
            "With NCCL over TCP on a 100G-class NIC a single socket cannot fill the link. Try more "
            "helper threads and sockets (product <= 64) and measure busbw before and after; cloud "
            "NCCL plugins may already set them."
        ),
        env={"NCCL_SOCKET_NTHREADS": "4", "NCCL_NSOCKS_PERTHREAD": "4"},
    )


@rule(
    id="net.mtu_small",
    layer="network",
    title=N_("Fast data NIC with standard (1500) MTU"),
    source=f"NVIDIA MLNX_OFED 'Performance Tuning' (Performance Tuning for NVIDIA Adapters; mlnx_tune), {OFED_TUNING}; advisory",
    priority={"cloud": "low", "onprem": "medium"},
    controllable=provider_owned(
        Controllable(
            can="partly",
            reason=N_("the VPC decides the largest MTU"),
            alternative=N_("use the provider's documented jumbo MTU (often 8500-9001)"),
        )
    ),
)
def mtu_small(ctx: RuleContext):
    jumbo, fast, standard = ctx.t("mtu_jumbo"), ctx.t("fast_nic_mbps"), ctx.t("mtu_standard_below")
    small = [
        (f"network.nics[{n.name}].mtu", n.mtu)
        for n in physical_nics(ctx.facts)
        if (n.speed_mbps or 0) >= fast and n.mtu and n.mtu < standard and (n.state or "up") == "up"
    ]
    if not small or not ctx.facts.gpus:
        return None
    return ctx.finding(
        "info",
        small,
        msg(
            "Jumbo frames ({jumbo}) cut per-packet overhead on RoCE/TCP data paths, if every switch "
            "port and peer supports them. Advisory: change it fabric-wide or not at all."
        ).format(jumbo=jumbo),
        commands=["sudo ip link set dev <nic> mtu 9000"],
    )
