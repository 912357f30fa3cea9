"""GPU <-> NIC placement (layer: hardware): each GPU's nearest compute-fabric NIC in `nvidia-smi topo -m`
and the link type, also when the pairing is not GPUi <-> NICi.

A GPU without a NIC behind its own PCIe switch (PIX/PXB) cannot use GPUDirect RDMA at NCCL's default
distance; NCCL then routes its traffic through a peer GPU over NVLink (PXN) or stages it through host
memory. Source: NCCL environment variables (NCCL_PXN_DISABLE, NCCL_P2P_PXN_LEVEL, NCCL_NET_GDR_LEVEL)."""

from __future__ import annotations

from gpuwise.advise.controls import provider_owned
from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.finding import Controllable
from gpuwise.advise.rules._evidence import gpu_label
from gpuwise.advise.rules._links import NCCL_ENV
from gpuwise.facts.fabric import DISTANCE_ORDER, SWITCH_LOCAL, port_roles
from gpuwise.i18n import N_, joined, msg


def nearest_nics(ctx: RuleContext) -> list[tuple[int, str, str]]:
    """(GPU position, nearest compute NIC device, link) per GPU row of `topo -m`; ties keep the first NIC."""
    topo = ctx.facts.topology
    roles = port_roles(ctx.facts)
    compute = {dev for (dev, _port), role in roles.items() if role.compute}
    # roles apply only when the matrix names the RDMA devices (NIC legend or mlx5_N columns)
    known = any(topo.nic_devices.get(n, n) in compute for n in topo.nic_names)
    out = []
    for i, row in enumerate(topo.gpu_nic_links or []):
        best: tuple[int, str, str] | None = None
        for col, link in enumerate(row):
            if col >= len(topo.nic_names) or link not in DISTANCE_ORDER:
                continue
            device = topo.nic_devices.get(topo.nic_names[col], topo.nic_names[col])
            if known and device not in compute:
                continue  # a management/storage NIC is no GPUDirect path for NCCL
            rank = DISTANCE_ORDER.index(link)
            if best is None or rank < best[0]:
                best = (rank, device, link)
        if best is not None:
            out.append((i, best[1], best[2]))
    return out


@rule(
    id="topo.gpu_nic_placement",
    layer="hardware",
    title=N_("Some GPUs have no NIC behind their own PCIe switch"),
    source=f"NCCL environment variables: NCCL_NET_GDR_LEVEL (GPUDirect RDMA by PCIe distance), NCCL_PXN_DISABLE and NCCL_P2P_PXN_LEVEL (PXN: send through a peer GPU's NIC over NVLink), {NCCL_ENV}",
    priority={"cloud": "low", "onprem": "high"},
    references=(NCCL_ENV,),
    controllable=provider_owned(
        Controllable(
            can="no",
            reason=N_("PCIe placement is fixed by the host"),
            alternative=N_("choose an instance type with one NIC per GPU under the same PCIe switch"),
        )
    ),
)
def gpu_nic_placement(ctx: RuleContext):
    if not ctx.facts.network.rdma_devices or not ctx.facts.gpus:
        return None  # no RDMA NICs: no GPUDirect RDMA to place
    nearest = nearest_nics(ctx)
    if not nearest:
        return None
    g = ctx.facts.gpus
    mapping = [
        (
            f"topology.gpu_nic_links[{i}]",
            f"{gpu_label(g[i], i) if i < len(g) else f'GPU {i}'} -> {device} {link}",
        )
        for i, device, link in nearest
    ]
    far = [(i, device, link) for i, device, link in nearest if link not in SWITCH_LOCAL]
    if not far:
        return ctx.passed(mapping, msg("every GPU has a compute NIC behind its own PCIe switch"))
    if len(far) == len(nearest):
        # symmetric: no GPU has a switch-local NIC, so every rank takes the same path (SYS is judged
        # by topo.gpu_nic_numa)
        return ctx.passed(
            mapping, msg("every GPU reaches its nearest compute NIC the same way (no PCIe-switch-local NIC)")
        )
    names = joined(
        ", ", (f"{gpu_label(g[i], i) if i < len(g) else f'GPU {i}'} ({link})" for i, _d, link in far)
    )
    return ctx.finding(
        "warn",
        mapping,
        msg(
            "{names} have no compute NIC behind their own PCIe switch, while the other GPUs do. NCCL "
            "uses GPUDirect RDMA only up to the distance NCCL_NET_GDR_LEVEL allows (PXB by default on most platforms), so for these GPUs it "
            "sends through a peer GPU that has a near NIC over NVLink (PXN, on unless NCCL_PXN_DISABLE=1; "
            "NCCL_P2P_PXN_LEVEL sets when) or stages the data through host memory. Check the NIC "
            "seating against the vendor's PCIe layout, and NCCL_DEBUG=INFO for 'via NET/IB/.../GDRDMA' "
            "and PXN lines."
        ).format(names=names),
        commands=[
            "nvidia-smi topo -m",
            "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET <your job> 2>&1 | grep -E 'GDRDMA|PXN'",
        ],
    )
