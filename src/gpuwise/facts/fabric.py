"""Which RDMA ports are the compute fabric (the ports NCCL moves gradients over) and which are not.

A GPU server often carries RDMA-capable ports that training never uses: a management or storage
Ethernet (RoCE-capable ConnectX) next to its InfiniBand compute rails, or an Azure Accelerated
Networking VF next to the IB port. Judging those like compute rails gives false alarms, so each port
gets a role from the recorded evidence, strongest first:

1. NCCL_IB_HCA, when set: the devices NCCL is told to use (with `^` to exclude, `=` for exact names);
2. GPU affinity in `nvidia-smi topo -m`: a device that shares a PCIe switch (PIX/PXB) with a GPU;
3. link layer: when the node has InfiniBand ports, they are the fabric and Ethernet ports are not;
4. otherwise (RoCE only) the device model with the fastest active port.

A pure function of Facts: no probing.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuwise.facts.models import Facts, RdmaDevice, RdmaPort
from gpuwise.i18n import msg

SWITCH_LOCAL = ("PIX", "PXB")  # nvidia-smi topo -m legend: at most one / several PCIe bridges, no host bridge
# nvidia-smi topo -m legend, nearest first (NV# links are GPU-GPU only)
DISTANCE_ORDER = ("PIX", "PXB", "PHB", "NODE", "SYS")


@dataclass(frozen=True)
class PortRole:
    device: str
    port: int
    compute: bool
    why: str  # the evidence that decided, e.g. "NCCL_IB_HCA", "PIX to a GPU", "InfiniBand"


def nccl_ib_hca(facts: Facts) -> str | None:
    """NCCL_IB_HCA as NCCL reads it: the environment wins over /etc/nccl.conf."""
    net = facts.network
    if "NCCL_IB_HCA" in net.nccl_env:
        return net.nccl_env["NCCL_IB_HCA"]
    return (net.nccl_conf or {}).get("NCCL_IB_HCA")


def _hca_matches(spec: str, device: str, port: int) -> bool | None:
    """NCCL_IB_HCA syntax (NCCL environment variables): `[^][=]name[:port],...`; names are prefixes
    unless `=` is given. None for an empty list."""
    text = spec.strip()
    exclude = text.startswith("^")
    text = text.lstrip("^")
    exact = text.startswith("=")
    text = text.lstrip("=")
    entries = [e.strip() for e in text.split(",") if e.strip()]
    if not entries:
        return None
    hit = False
    for entry in entries:
        name, _sep, want_port = entry.partition(":")
        named = device == name if exact else device.startswith(name)
        if named and (not want_port or want_port == str(port)):
            hit = True
    return not hit if exclude else hit


def gpu_local_devices(facts: Facts) -> dict[str, str]:
    """RDMA device -> its nearest link to any GPU in `topo -m` ("PIX", "NODE", ...), for listed NICs."""
    topo = facts.topology
    out: dict[str, str] = {}
    for col, nic in enumerate(topo.nic_names):
        device = topo.nic_devices.get(nic, nic)
        links = [row[col] for row in topo.gpu_nic_links or [] if col < len(row)]
        ranked = [link for link in links if link in DISTANCE_ORDER]
        if ranked:
            out[device] = min(ranked, key=DISTANCE_ORDER.index)
    return out


def port_roles(facts: Facts) -> dict[tuple[str, int], PortRole]:
    """Every RDMA port's role, keyed by (device name, port number)."""
    ports = [(d, p) for d in facts.network.rdma_devices for p in d.ports]
    roles: dict[tuple[str, int], PortRole] = {}
    spec = nccl_ib_hca(facts)
    if spec:
        for d, p in ports:
            hit = _hca_matches(spec, d.name, p.port)
            if hit is not None:
                roles[(d.name, p.port)] = PortRole(d.name, p.port, hit, "NCCL_IB_HCA")
        if roles:
            return roles
    local = gpu_local_devices(facts)
    if any(link in SWITCH_LOCAL for link in local.values()):
        for d, p in ports:
            link = local.get(d.name)
            if link is not None:
                roles[(d.name, p.port)] = PortRole(
                    d.name, p.port, link in SWITCH_LOCAL, msg("{link} to a GPU").format(link=link)
                )
    rest = [(d, p) for d, p in ports if (d.name, p.port) not in roles]
    if any(_layer(p) == "infiniband" for _d, p in ports):
        for d, p in rest:
            ib = _layer(p) == "infiniband"
            why = (
                msg("InfiniBand link layer")
                if ib
                else msg("{layer} link layer next to InfiniBand ports").format(layer=p.link_layer or "?")
            )
            roles[(d.name, p.port)] = PortRole(d.name, p.port, ib, why)
        return roles
    fastest = _fastest_model(rest)
    for d, p in rest:
        compute = fastest is None or (d.model or "") == fastest
        why = f"{d.model or '?'} {p.link_layer or ''}".strip()
        roles[(d.name, p.port)] = PortRole(d.name, p.port, compute, why)
    return roles


def _layer(port: RdmaPort) -> str:
    return (port.link_layer or "").lower()


def _fastest_model(ports: list[tuple[RdmaDevice, RdmaPort]]) -> str | None:
    """The model with the fastest ACTIVE port; None when the models are unknown or all the same."""
    models = {d.model or "" for d, _p in ports}
    if len(models) < 2:
        return None
    best: dict[str, float] = {}
    for d, p in ports:
        if (p.state or "").upper() == "ACTIVE" and p.rate_gbps:
            best[d.model or ""] = max(best.get(d.model or "", 0.0), p.rate_gbps)
    return max(best, key=lambda m: best[m]) if best else None
