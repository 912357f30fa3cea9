"""A network bond left without an active member ("bond1: now running without any active interface!" from the
Linux bonding driver): that bond carried no traffic from then on. Judged with the bond's role where the evidence
gives it (a member that is a compute-fabric RDMA port, or the interface NCCL is told to use), how recently it
happened and whether a member became active again."""

from __future__ import annotations

import re

from gpuwise.advise.controls import CLOUD_HARDWARE
from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.rules._evidence import Group, groups, ranked, when
from gpuwise.advise.rules._links import KERNEL_BONDING
from gpuwise.facts.fabric import port_roles
from gpuwise.facts.models import Facts, KernelLog
from gpuwise.i18n import N_, joined, msg


def members(log: KernelLog, bond: str) -> list[str]:
    """The bond's member interfaces the log names ('bond1: link status definitely down for interface ens3f1')."""
    out = [
        e.device for e in log.events if e.kind in ("link_down", "link_up") and e.detail.startswith(bond + ":")
    ]
    return list(dict.fromkeys(out))


def bond_role(facts: Facts, bond: str, names: list[str]) -> tuple[bool | None, str]:
    """(compute fabric?, why): True when NCCL is told to use the bond or a member is a compute RDMA port, False
    when its members are RDMA ports outside the compute fabric, None when nothing says."""
    ifname = facts.network.nccl_env.get("NCCL_SOCKET_IFNAME") or (facts.network.nccl_conf or {}).get(
        "NCCL_SOCKET_IFNAME"
    )
    if ifname and not ifname.startswith("^") and bond in re.split(r"[,=\s]+", ifname):
        return True, msg("NCCL_SOCKET_IFNAME names it")
    roles = port_roles(facts)
    by_netdev = {
        p.netdev: roles.get((d.name, p.port)) for d in facts.network.rdma_devices for p in d.ports if p.netdev
    }
    found = [(n, by_netdev[n]) for n in names if by_netdev.get(n) is not None]
    if any(r.compute for _n, r in found):
        return True, msg("member {name} is a compute-fabric RDMA port").format(
            name=next(n for n, r in found if r.compute)
        )
    if found:
        return False, msg("members are RDMA ports outside the compute fabric ({why})").format(
            why=found[0][1].why
        )
    return None, msg("its role is not in the evidence")


@rule(
    id="kernel.bond_down",
    layer="network",
    title=N_("A network bond had no active interface"),
    source=f"Linux bonding driver documentation (link monitoring, active slave), {KERNEL_BONDING}",
    priority="high",
    controllable=CLOUD_HARDWARE,
    references=(KERNEL_BONDING,),
)
def bond_down(ctx: RuleContext):
    found = [
        g for g in groups(ctx.facts.evidence.kernel_logs, ("bond_no_active", "bond_active")) if _outage(g)
    ]
    if not found:
        return None
    found = ranked(found, ctx.t("kernel_event_recent_s"), 2)
    recent_s = ctx.t("kernel_event_recent_s")
    judged = []
    for g in found:
        names = members(g.log, g.device)
        compute, why = bond_role(ctx.facts, g.device, names)
        ago = g.ago_s()
        recent = ago is None or ago <= recent_s
        back = g.events[-1].kind == "bond_active"
        # outside the compute fabric, a member back or long ago: info; else by role (unknown: warn)
        status = "info" if compute is False or back or not recent else ("fail" if compute else "warn")
        judged.append((g, names, why, status, back))
    order = ("fail", "warn", "info")
    judged.sort(key=lambda j: order.index(j[3]))
    worst = judged[0][3]
    evidence = []
    for g, names, why, _status, back in judged[:8]:
        downs = [e for e in g.events if e.kind == "bond_no_active"]
        outage = Group(g.device, g.log, downs)
        evidence.append(
            (
                f"evidence.kernel_logs[{g.log.source}].bonds[{g.device}]",
                msg("{bond} without any active interface {when}; members {members}; {role}{back}").format(
                    bond=g.device,
                    when=when(outage),
                    members=joined(", ", names) or "?",
                    role=why,
                    back=msg("; a member became active again") if back else "",
                ),
            )
        )
    texts = {
        "fail": msg(
            "A bond that carries the job's traffic lost every member: the node was off that network, NCCL's "
            "connections over it failed. Drain the node; check each member's cable, optic and switch port."
        ),
        "warn": msg(
            "A bond lost every member and nothing in the log says one came back: the node was off that network "
            "(an outage, not a flap). If it carries training or storage traffic, drain the node and check each "
            "member's cable, optic and switch port; pass `ibdev2netdev` or NCCL_SOCKET_IFNAME to tell its role."
        ),
        "info": msg(
            "A bond lost every member at some point (outside the compute fabric, long ago, or a member came "
            "back): worth knowing, nothing to do unless it coincides with a failed job."
        ),
    }
    return ctx.finding(
        worst,
        evidence,
        texts[worst],
        commands=["cat /proc/net/bonding/<bond>", "ip -s link show", "sudo dmesg -T | grep -i bond"],
        priority="low" if worst == "info" else None,
    )


def _outage(g: Group) -> bool:
    return any(e.kind == "bond_no_active" for e in g.events)
