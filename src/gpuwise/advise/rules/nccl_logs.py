"""Rules over NCCL_DEBUG=INFO logs of the user's own runs (layer: network), from `doctor --nccl-log FILE`.

A probe sees the machine; the log sees what NCCL actually did: which network it used, the transports
between ranks, the algorithms, the variables the job set, and its warnings.
"""

from __future__ import annotations

from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.rules._links import (
    AREAL_639,
    AWS_EFA_NCCL,
    AWS_OFI_NCCL,
    GPU_OPERATOR_RDMA,
    NCCL_ENV,
    NCCL_TESTS_PERFORMANCE,
    NCCL_TROUBLESHOOTING,
)
from gpuwise.advise.rules._util import RDMA_GAIN
from gpuwise.advise.rules._util import sentences as _sentences
from gpuwise.bench.nccl_debug import (
    NcclDebugLog,
    gpus_per_node,
    net_nics,
    ofi_over_sockets,
    uses_gdrdma,
    uses_socket,
)
from gpuwise.catalog.efa import efa_support
from gpuwise.catalog.offers import find_offer
from gpuwise.i18n import N_, joined, msg

SOCKET_VS_IB_ISSUE = AREAL_639


def _active_rdma_ports(ctx: RuleContext) -> list[str]:
    return [
        f"network.rdma_devices[{d.name}].ports[{p.port}]"
        for d in ctx.facts.network.rdma_devices
        for p in d.ports
        if (p.state or "").upper() == "ACTIVE"
    ]


@rule(
    id="nccl.socket_transport",
    layer="network",
    title=N_("NCCL ran over TCP sockets"),
    source=f"NCCL environment variables (NCCL_IB_DISABLE, NCCL_SOCKET_*), {NCCL_ENV}; "
    f"NCCL over sockets instead of InfiniBand: {SOCKET_VS_IB_ISSUE}",
    priority={"cloud": "medium", "onprem": "high"},
    gain=RDMA_GAIN,
    references=(NCCL_ENV, NCCL_TROUBLESHOOTING, SOCKET_VS_IB_ISSUE),
)
def socket_transport(ctx: RuleContext):
    if not ctx.nccl_logs:
        return None
    socket_logs = [log for log in ctx.nccl_logs if uses_socket(log)]
    if not socket_logs:
        nets = sorted({n for log in ctx.nccl_logs for n in log.networks})
        if not nets:
            return None
        return ctx.passed(
            [(f"nccl_log[{ctx.nccl_logs[0].source}].networks", nets)],
            msg("NCCL used {join}").format(join=joined(", ", nets)),
        )
    log = socket_logs[0]
    evidence: list[tuple[str, object]] = [(f"nccl_log[{log.source}].networks", log.networks)]
    disabled = {k: v for k, v in log.env.items() if k == "NCCL_IB_DISABLE" and v.strip() not in ("0", "")}
    evidence += [(f"nccl_log[{log.source}].env.{k}", v) for k, v in disabled.items()]
    if log.ib_device_missing:
        evidence.append((f"nccl_log[{log.source}].ib_device_missing", True))
    active = _active_rdma_ports(ctx)
    evidence += [(path, "ACTIVE") for path in active[:4]]
    if active:
        return ctx.finding(
            "fail",
            evidence,
            _sentences(
                [
                    msg(
                        "NCCL moved data over TCP sockets although RDMA is available (active RDMA ports on "
                        "this machine)."
                    ),
                    msg(
                        "Collectives run several times slower. Remove NCCL_IB_DISABLE, make the HCAs "
                        "visible in the container (/dev/infiniband, --device, IPC_LOCK, memlock) and check "
                        "NCCL_IB_HCA."
                    ),
                ]
            ),
            commands=[
                "ibv_devinfo | grep -E 'hca_id|state'",
                "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET <your job>",
            ],
        )
    if disabled:
        # The job chose sockets; nothing read here says the node has RDMA, so this is not a proven loss.
        return ctx.finding(
            "warn",
            evidence,
            msg(
                "The job set NCCL_IB_DISABLE, so NCCL used TCP sockets. If the nodes have InfiniBand or RoCE "
                "HCAs, remove it: collectives over sockets run several times slower."
            ),
            commands=["ibv_devinfo | grep -E 'hca_id|state'"],
        )
    if log.ib_device_missing:
        return ctx.finding(
            "warn",
            evidence,
            msg(
                "NCCL looked for InfiniBand/RoCE devices and found none, then used TCP sockets. If this "
                "node has HCAs, they are not visible to the job (container devices, drivers, rdma-core)."
            ),
            commands=["ls /dev/infiniband", "ibv_devinfo"],
        )
    return ctx.finding(
        "info",
        evidence,
        msg(
            "NCCL used TCP sockets, as expected on an Ethernet-only network. On 100 Gbit/s-class "
            "links, more socket threads often raise bus bandwidth (product of the two at most 64)."
        ),
        env={"NCCL_SOCKET_NTHREADS": "4", "NCCL_NSOCKS_PERTHREAD": "4"},
        priority="low",
    )


@rule(
    id="nccl.ofi_provider",
    layer="network",
    title=N_("The libfabric provider aws-ofi-nccl selected"),
    source=f"aws-ofi-nccl (NCCL's libfabric net plugin), {AWS_OFI_NCCL}; EFA with NCCL, {AWS_EFA_NCCL}",
    priority={"cloud": "high", "onprem": "medium"},
    gain=RDMA_GAIN,
    references=(AWS_OFI_NCCL, AWS_EFA_NCCL),
)
def ofi_provider(ctx: RuleContext):
    logs = [log for log in ctx.nccl_logs if log.ofi_provider]
    if not logs:
        return None
    log = next((g for g in logs if ofi_over_sockets(g)), logs[0])
    where = f"nccl_log[{log.source}]"
    evidence: list[tuple[str, object]] = [(f"{where}.ofi_provider", log.ofi_provider)]
    evidence += [(f"{where}.ofi_nics", log.ofi_nics)] if log.ofi_nics else []
    values = {"provider": log.ofi_provider, "nics": log.ofi_nics}
    if ofi_over_sockets(log):
        return ctx.finding(
            "warn",
            evidence,
            _sentences(
                [
                    msg(
                        "aws-ofi-nccl selected libfabric's {provider} provider, not efa: NCCL's traffic "
                        "between nodes runs over TCP, several times slower than EFA."
                    ).format(**values),
                    msg(
                        "On an EFA instance, check that the EFA devices are visible to the job "
                        "(/dev/infiniband in the container), that the EFA installer's libfabric is the one "
                        "loaded (LD_LIBRARY_PATH) and set FI_PROVIDER=efa."
                    ),
                ]
            ),
            commands=["fi_info -p efa -t FI_EP_RDM", "ls /dev/infiniband"],
            env={"FI_PROVIDER": "efa"},
        )
    if log.ofi_provider.split(";")[0].lower() == "efa":
        if short := _efa_short(ctx, log):
            return short
        text = (
            msg("NCCL's network is EFA through aws-ofi-nccl ({nics} EFA devices found)").format(**values)
            if log.ofi_nics
            else msg("NCCL's network is EFA through aws-ofi-nccl")
        )
        return ctx.passed(evidence, text)
    return ctx.finding(
        "info",
        evidence,
        msg("aws-ofi-nccl selected libfabric's {provider} provider.").format(**values),
        priority="low",
    )


def _efa_short(ctx: RuleContext, log: NcclDebugLog):
    """A warning when aws-ofi-nccl found fewer EFA devices than the instance type has (EFA table), else None."""
    instance = ctx.facts.platform.instance_type
    support = efa_support(instance)
    if not log.ofi_nics or support is None or log.ofi_nics >= support.efa_interfaces:
        return None
    where = f"nccl_log[{log.source}]"
    values = {
        "nics": log.ofi_nics,
        "instance": instance,
        "supported": support.efa_interfaces,
        "source": support.source,
    }
    return ctx.finding(
        "warn",
        [
            (f"{where}.ofi_provider", log.ofi_provider),
            (f"{where}.ofi_nics", log.ofi_nics),
            ("platform.instance_type", instance),
            (f"catalog:efa_instance_types[{support.instance_type}].efa_interfaces", support.efa_interfaces),
        ],
        _sentences(
            [
                msg(
                    "aws-ofi-nccl found {nics} EFA devices, but a {instance} has {supported} ({source}): NCCL spreads "
                    "its traffic between nodes over the devices it found, so the missing ones' bandwidth is lost."
                ).format(**values),
                msg(
                    "Launch the instance with every EFA network card attached (one EFA interface per network "
                    "card index) and, in a container, pass all /dev/infiniband/uverbs* devices to the job."
                ),
            ]
        ),
        commands=["fi_info -p efa -t FI_EP_RDM | grep -c domain", "ls /dev/infiniband"],
    )


@rule(
    id="nccl.gdrdma",
    layer="network",
    title=N_("GPUDirect RDMA in NCCL's InfiniBand/RoCE connections"),
    source=f"NCCL environment variables, NCCL_NET_GDR_LEVEL (GPU-NIC distance up to which GPUDirect RDMA is "
    f"used; 'via NET/IB/N/GDRDMA' in the INFO log when it is), {NCCL_ENV}; NVIDIA GPU Operator, 'GPUDirect "
    f"RDMA', {GPU_OPERATOR_RDMA}",
    priority="low",
    references=(NCCL_ENV, GPU_OPERATOR_RDMA),
)
def gdrdma(ctx: RuleContext):
    """NCCL's own IB/RoCE transport without '/GDRDMA' stages every network transfer through host memory.
    That is right when the NIC is far from the GPU (NCCL_NET_GDR_LEVEL) and wrong when nvidia_peermem or
    DMA-BUF is missing: the log alone cannot tell which, so information, not a warning."""
    for log in ctx.nccl_logs:
        ib = sorted(t for t in log.transports if t.startswith("NET/IB"))
        if not ib:
            continue
        where = f"nccl_log[{log.source}].transports"
        if uses_gdrdma(log):
            return ctx.passed([(where, ib)], msg("NCCL's network connections use GPUDirect RDMA"))
        return ctx.finding(
            "info",
            [(where, ib)],
            msg(
                "NCCL's InfiniBand/RoCE connections ({transports}) do not use GPUDirect RDMA: every transfer "
                "is staged through host memory. Expected where the NIC is across the CPU from the GPU (SYS, "
                "see nvidia-smi topo -m); where it shares a PCIe switch with the GPU, load nvidia_peermem (or "
                "use DMA-BUF) and look for '/GDRDMA' in the next log."
            ).format(transports=joined(", ", ib[:4])),
            commands=["lsmod | grep -E 'nvidia_peermem|nv_peer_mem'", "nvidia-smi topo -m"],
        )
    return None


@rule(
    id="nccl.log_warnings",
    layer="network",
    title=N_("NCCL printed warnings during the run"),
    source=f"NCCL troubleshooting guide: {NCCL_TROUBLESHOOTING}",
    priority="medium",
    references=(NCCL_TROUBLESHOOTING,),
)
def log_warnings(ctx: RuleContext):
    evidence = [
        (f"nccl_log[{log.source}].warnings[{i}]", text)
        for log in ctx.nccl_logs
        for i, text in enumerate(log.warnings[:5])
    ]
    if not evidence:
        return None
    return ctx.finding(
        "warn",
        evidence,
        msg(
            "NCCL WARN lines usually name a failed connection, a missing device or a fallback. Fix "
            "what each names before tuning anything else."
        ),
    )


@rule(
    id="nccl.job_debug_vars",
    layer="network",
    title=N_("The job set NCCL 'Debugging' variables"),
    source=f"NCCL environment variables, 'Debugging' section ('should not be used in production'): {NCCL_ENV}",
    priority="medium",
    references=(NCCL_ENV,),
)
def job_debug_vars(ctx: RuleContext):
    names = set(ctx.t("nccl_debugging_vars"))
    evidence = [
        (f"nccl_log[{log.source}].env.{k}", v)
        for log in ctx.nccl_logs
        for k, v in log.env.items()
        if k in names
    ]
    if not evidence:
        return None
    return ctx.finding(
        "warn",
        evidence,
        msg(
            "The job overrides NCCL's automatic choices with variables NCCL documents as debugging "
            "aids; remove them unless an A/B test on this cluster proved a gain."
        ),
        commands=["unset " + joined(" ", sorted({p.rsplit(".", 1)[1] for p, _value in evidence}))],
    )


@rule(
    id="nccl.run_summary",
    layer="network",
    title=N_("What NCCL chose in the logged run"),
    source=f"NCCL_DEBUG=INFO output (NCCL_DEBUG_SUBSYS=INIT,NET,GRAPH,TUNING), {NCCL_ENV}",
    priority="low",
    references=(NCCL_ENV,),
)
def run_summary(ctx: RuleContext):
    evidence = []
    for log in ctx.nccl_logs:
        where = f"nccl_log[{log.source}]"
        for field in ("version", "ranks", "nodes", "networks", "ofi_provider", "nvls"):
            value = getattr(log, field)
            if value not in (None, [], {}):
                evidence.append((f"{where}.{field}", value))
        evidence += [(f"{where}.transports", dict(sorted(log.transports.items())))] if log.transports else []
        evidence += [(f"{where}.algorithms.{op}", algos) for op, algos in sorted(log.algorithms.items())]
    if not evidence:
        return None
    return ctx.finding(
        "info",
        evidence,
        msg(
            "For reference: the network, transports, NVLS and algorithms NCCL picked. Ring suits "
            "large messages, Tree and NVLS large node counts and small messages; leave the choice to "
            "NCCL unless measured."
        ),
    )


def _nccl_tests_runs(ctx: RuleContext):
    """(measurement, its log) for each multi-node nccl-tests result whose file also holds NCCL debug lines."""
    logs = {log.source: log for log in ctx.nccl_logs}
    for m in ctx.bench.results if ctx.bench else []:
        log = logs.get(str(m.params.get("source")))
        if m.params.get("tool") == "nccl-tests" and m.value is not None and log is not None:
            yield m, log


def _nic_rate_gbps(
    ctx: RuleContext, log: NcclDebugLog, nics: dict[str, str]
) -> tuple[float | None, tuple[str, float] | None]:
    """The lowest line rate (Gb/s) of the NICs the log used and the evidence it came from: the capture's
    ibstat/sysfs ports of those devices, else the log's own topology dump (which gives GB/s)."""
    wanted = {n.split(":")[0]: int(n.split(":")[1].split("/")[0]) for n in nics.values()}
    rates = [
        (p.rate_gbps, (f"network.rdma_devices[{d.name}].ports[{p.port}].rate_gbps", p.rate_gbps))
        for d in ctx.facts.network.rdma_devices
        for p in d.ports
        if d.name in wanted and p.port == wanted[d.name] and p.rate_gbps
    ]
    rates = rates or [
        (log.net_bw_gb_s[i] * 8, (f"nccl_log[{log.source}].net_bw_gb_s.{i}", log.net_bw_gb_s[i]))
        for i in nics
        if i in log.net_bw_gb_s
    ]
    return min(rates) if rates else (None, None)


def _fabric_bound(op: str, share: float, ranks: int, per_node: int) -> float:
    """The busbw the network allows: a ring collective's busbw equals the per-GPU network share; in an
    all-to-all only the (ranks - per_node) / ranks of each GPU's data leaves its node, and busbw is
    algbw x (ranks - 1) / ranks (nccl-tests PERFORMANCE.md), so the bound is higher."""
    if op == "alltoall" and ranks > per_node:
        return share * (ranks - 1) / (ranks - per_node)
    return share


def _efa_fabric(ctx: RuleContext, log: NcclDebugLog) -> tuple[int, float, list[tuple[str, object]]] | None:
    """EFA through aws-ofi-nccl: the adapters the log's "Selected Provider is efa (found N nics)" counts,
    each at the instance type's EFA bandwidth (catalog offers, RdmaGbps) divided among them; None when the
    log, the instance type or the catalog does not say."""
    instance = ctx.facts.platform.instance_type
    if (log.ofi_provider or "").split(";")[0].lower() != "efa" or not log.ofi_nics or not instance:
        return None
    offers = [o for o in find_offer(instance) if o.fabric == "efa" and o.rdma_gbps]
    if not offers:
        return None
    where = f"nccl_log[{log.source}]"
    evidence: list[tuple[str, object]] = [
        (f"{where}.ofi_provider", log.ofi_provider),
        (f"{where}.ofi_nics", log.ofi_nics),
        ("platform.instance_type", instance),
        (f"catalog:offers[{offers[0].instance_type}].rdma_gbps", offers[0].rdma_gbps),
    ]
    return log.ofi_nics, offers[0].rdma_gbps / log.ofi_nics, evidence


def _fabric(ctx: RuleContext, log: NcclDebugLog) -> tuple[int, float, list[tuple[str, object]]] | None:
    """(NICs, one NIC's line rate in Gb/s, evidence) of the network the log shows: InfiniBand/RoCE NICs
    (NET/IB) with their rate from the capture or the log's topology dump, or EFA (NET/OFI)."""
    nics = net_nics(log)
    if not nics:
        return _efa_fabric(ctx, log)
    rate, rate_evidence = _nic_rate_gbps(ctx, log, nics)
    if rate is None or rate_evidence is None:
        return None
    return len(nics), rate, [(f"nccl_log[{log.source}].net_devices.IB", list(nics.values())), rate_evidence]


@rule(
    id="nccl.collective_vs_fabric",
    layer="network",
    title=N_("Collective bandwidth against the fabric the NCCL log shows"),
    source=f"NCCL environment variables (NCCL_NCHANNELS_PER_NET_PEER, NCCL_MIN_NCHANNELS, NCCL_PXN_DISABLE, "
    f"NCCL_P2P_PXN_LEVEL), {NCCL_ENV}; busbw definitions: {NCCL_TESTS_PERFORMANCE}",
    priority="medium",
    references=(NCCL_ENV, NCCL_TESTS_PERFORMANCE),
)
def collective_vs_fabric(ctx: RuleContext):
    out = []
    for m, log in _nccl_tests_runs(ctx):
        op, per_node = str(m.params.get("op")), gpus_per_node(log)
        if not per_node or not log.nodes or log.nodes < 2 or uses_socket(log) or ofi_over_sockets(log):
            continue
        fabric = _fabric(ctx, log)
        if fabric is None:
            continue
        n_nics, rate, fabric_evidence = fabric
        where = f"nccl_log[{log.source}]"
        one_nic = rate / 8  # GB/s
        share = n_nics * one_nic / per_node
        cap = min(one_nic, share)  # "one NIC's line rate per GPU", or the share when NICs < GPUs
        bound = _fabric_bound(op, share, log.ranks or per_node * log.nodes, per_node)
        evidence = [
            (f"bench:{m.name}", m.value),
            *([(f"bench:{m.name}.params.gpu", m.params["gpu"])] if m.params.get("gpu") else []),
            fabric_evidence[0],
            (f"{where}.ranks", log.ranks),
            (f"{where}.nodes", log.nodes),
            (f"{where}.gdrdma", uses_gdrdma(log)),
            *fabric_evidence[1:],
        ]
        pxn_off = log.env.get("NCCL_PXN_DISABLE", "0").strip() not in ("0", "")
        evidence += [(f"{where}.env.NCCL_PXN_DISABLE", log.env["NCCL_PXN_DISABLE"])] if pxn_off else []
        low, high = ctx.t("nccl_one_nic_band")
        reached = m.value >= ctx.t("nccl_fabric_bound_reached") * bound
        values = {
            "op": op,
            "busbw": f"{m.value:g}",
            "nics": n_nics,
            "gpus": per_node,
            "share": f"{share:.1f}",
            "cap": f"{cap:.1f}",
            "bound": f"{bound:.1f}",
        }
        if reached and n_nics < per_node:
            out.append(
                ctx.finding(
                    "info",
                    evidence,
                    msg(
                        "{op} busbw {busbw} GB/s is at the network's share per GPU ({nics} NICs for "
                        "{gpus} GPUs per node: {share} GB/s each). The cap is the hardware, not a "
                        "setting: more NICs per node would raise it."
                    ).format(**values),
                    priority="low",
                )
            )
        elif reached:
            out.append(
                ctx.passed(
                    evidence,
                    msg("{op} busbw {busbw} GB/s reaches the fabric's bound ({bound} GB/s)").format(**values),
                )
            )
        elif op in ("alltoall", "all_gather") and low * cap <= m.value <= high * cap:
            out.append(
                ctx.finding(
                    "warn",
                    evidence,
                    _sentences(
                        [
                            msg(
                                "{op} busbw {busbw} GB/s is capped near one NIC's line rate per GPU "
                                "({cap} GB/s with {nics} NICs for {gpus} GPUs per node) while the "
                                "fabric allows about {bound} GB/s."
                            ).format(**values),
                            msg(
                                "Give each network peer more channels (NCCL_NCHANNELS_PER_NET_PEER; "
                                "NCCL_MIN_NCHANNELS too, a debugging variable to A/B test only) and "
                                "keep PXN on (NCCL_PXN_DISABLE=0) so traffic to a remote GPU leaves "
                                "through the NIC nearest to it; A/B test each with the same "
                                "nccl-tests command."
                            ),
                        ]
                    ),
                    env={
                        "NCCL_NCHANNELS_PER_NET_PEER": "4",
                        **({"NCCL_PXN_DISABLE": "0"} if pxn_off else {}),
                    },
                )
            )
        else:
            out.append(
                ctx.finding(
                    "info",
                    evidence,
                    msg(
                        "{op} busbw {busbw} GB/s is below the fabric's bound ({bound} GB/s with {nics} "
                        "NICs for {gpus} GPUs per node); check the other findings (transport, GDRDMA, "
                        "warnings) first."
                    ).format(**values),
                    priority="low",
                )
            )
    return out or None
