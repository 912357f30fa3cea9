"""Where the job runs and what it costs: from `--plan PLAN.json`, `--offer PROVIDER:INSTANCE`, or the job alone.

The cost is plan's model (plan/cost.py `cost_per_run`): an on-demand or spot node is paid while it runs,
price x nodes x hours. With --plan the figure is the plan's own `cost_per_run` for the chosen option.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gpuwise.catalog.launchable import launchable
from gpuwise.catalog.offers import Offer, find_offer
from gpuwise.documents.ids import PLAN_SCHEMA
from gpuwise.documents.load import read_document
from gpuwise.documents.plan import PlanDocument, PlanOption, ServingPlan
from gpuwise.errors import UserInputError
from gpuwise.i18n import N_, msg
from gpuwise.launch.job import Job

PLAN_FIX = N_("pass a file written by `gpuwise plan WORKLOAD.yaml --format json -o PLAN.json`")


@dataclass
class Resources:
    """The machines one launch asks for, and the facts about them the checks use."""

    provider: str | None = None  # aws, tencent, ... (None: your own Slurm cluster)
    instance_type: str | None = None
    region: str | None = None
    zone: str | None = None
    accelerator: str | None = None  # the offer's GPU name, e.g. A100
    gpus_per_node: int | None = None
    nodes: int = 1
    spot: bool = False
    node_hour_price: float | None = None
    currency: str | None = None
    price_source: str | None = None
    network_gbps: float | None = None  # per node, the catalogued private network bandwidth
    fabric: str | None = None  # vpc-tcp | roce | infiniband | efa
    hours: float | None = None
    hours_source: str = ""
    run_cost: float | None = None
    cost_source: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def rdma(self) -> bool:
        return self.fabric in ("roce", "infiniband", "efa")


def parse_offer(text: str) -> tuple[str, str]:
    provider, sep, instance = text.partition(":")
    if not sep or not provider.strip() or not instance.strip():
        raise UserInputError(
            msg("--offer {text!r} is not PROVIDER:INSTANCE").format(text=text),
            msg("write it like {option} (see `gpuwise catalog offers`)").format(
                option="--offer tencent:GT4.41XLARGE948"
            ),
        )
    return provider.strip().lower(), instance.strip()


def from_offer(text: str, job: Job, offers: list[Offer] | None = None) -> Resources:
    provider, instance = parse_offer(text)
    found = [o for o in find_offer(instance, offers) if o.provider == provider]
    if not found:
        raise UserInputError(
            msg("--offer {text}: no {instance} offer from {provider} in the catalog").format(
                text=text, instance=instance, provider=provider
            ),
            msg("pick one from `{command}`, or add it to an offers CSV").format(
                command=f"gpuwise catalog offers --provider {provider}"
            ),
        )
    priced = [o for o in found if o.price is not None]
    o = min(priced, key=lambda x: x.price) if priced else found[0]
    r = _from_catalog_offer(o, job)
    r.hours, r.hours_source = job.hours, msg("the job's `hours`") if job.hours else ""
    r.run_cost, r.cost_source = on_demand_cost(r)
    return r


def _from_catalog_offer(o: Offer, job: Job) -> Resources:
    return Resources(
        provider=o.provider,
        instance_type=o.instance_type,
        region=o.region,
        zone=o.zone,
        accelerator=o.accelerator_name,
        gpus_per_node=int(o.accelerator_count) if o.accelerator_count and o.accelerator_count >= 1 else None,
        nodes=job.nodes,
        node_hour_price=o.price,
        currency=o.currency,
        price_source=o.price_source or None,
        network_gbps=o.network_gbps,
        fabric=o.fabric,
    )


def on_demand_cost(r: Resources) -> tuple[float | None, str]:
    """plan/cost.py's cost_per_run for one on-demand option: price x nodes x hours."""
    if r.node_hour_price is None or r.hours is None:
        missing = (
            msg("no price in the catalog (`{command}` may fetch one)").format(
                command=f"gpuwise catalog fetch {r.provider}"
            )
            if r.node_hour_price is None
            else msg("no training time (`hours` in JOB.yaml)")
        )
        return None, msg("unknown: {reason}").format(reason=missing)
    import numpy as np

    from gpuwise.plan.cost import CostArrays, cost_per_run

    nan = np.array([np.nan])
    costs = CostArrays(
        node_hour_price=np.array([r.node_hour_price]),
        pays_idle=np.array([0.0]),
        annual_per_node=nan,
        fixed_per_year=np.array([0.0]),
        capex_per_node=nan,
        opex_per_node_year=nan,
        currency_factor=np.array([1.0]),
    )
    cost = float(cost_per_run(costs, [r.nodes], np.array([[r.hours]]), np.array([1.0]), 1.0)[0, 0, 0])
    return cost, msg("{price} {currency}/node-hour x {nodes} nodes x {hours} h").format(
        price=f"{r.node_hour_price:g}", currency=r.currency, nodes=r.nodes, hours=f"{r.hours:g}"
    )


def from_plan(
    path: Path, job: Job, offers: list[Offer] | None = None, target: str | None = None
) -> tuple[Resources, str]:
    """The plan's recommendation -> (resources, the target it implies: 'slurm' for a build, else 'cloud').
    With a cloud target (None: your own machines), only the options that target can launch are considered."""
    plan = read_document(path, PlanDocument, PLAN_SCHEMA, fix=PLAN_FIX, kind=N_("plan"))
    if isinstance(plan, ServingPlan):
        raise UserInputError(
            msg("{path}: a serving plan (kind inference) has no training option to launch").format(path=path),
            msg(PLAN_FIX),
        )
    options = [o for o in plan.options if o.chosen_nodes]
    verdict = plan.decision.verdict
    kind = "onprem" if verdict == "build" else "cloud"
    candidates = [o for o in options if o.kind == kind]
    if kind == "cloud" and target is not None:
        candidates = [o for o in candidates if launchable(target, o.provider)]
        if not candidates and any(o.kind == kind for o in options):
            raise UserInputError(
                msg("{path}: none of the plan's cloud options can be launched with --target {target}").format(
                    path=path, target=target
                ),
                msg("make the plan for it: {command}").format(
                    command=f"gpuwise plan WORKLOAD.yaml --target {target} --format json -o {path}"
                ),
            )
    best = _cheapest(candidates)
    if best is None or best.chosen_nodes is None:
        raise UserInputError(
            (
                msg("{path}: the plan has no feasible on-prem option to launch (verdict {verdict})")
                if kind == "onprem"
                else msg("{path}: the plan has no feasible cloud option to launch (verdict {verdict})")
            ).format(path=path, verdict=verdict),
            msg("rerun `gpuwise plan` with options that fit the workload, or use --offer PROVIDER:INSTANCE"),
        )
    nodes = best.chosen_nodes
    row = best.chosen()
    r = Resources(
        provider=best.provider,
        instance_type=best.instance_type,
        region=best.region,
        accelerator=best.gpu,
        gpus_per_node=best.gpus_per_node,
        nodes=nodes,
        spot=best.pricing == "spot",
        node_hour_price=best.node_hour_price,
        currency=best.currency,
        price_source=best.price_source(),
    )
    if kind == "cloud" and r.instance_type:
        catalogued = [o for o in find_offer(r.instance_type, offers) if o.provider == r.provider]
        if catalogued:
            r.network_gbps, r.fabric, r.zone = (
                catalogued[0].network_gbps,
                catalogued[0].fabric,
                catalogued[0].zone,
            )
    days = row.time_to_train_days if row else None
    r.hours = days * 24 if days else job.hours
    r.hours_source = (
        msg("the plan's time to train ({path})").format(path=path) if days else msg("the job's `hours`")
    )
    r.run_cost = row.cost_per_run if row else None
    r.cost_source = msg("the plan's cost per run for {option} x {nodes} nodes ({path})").format(
        option=best.label or best.key, nodes=nodes, path=path
    )
    r.notes.append(
        msg("plan verdict: {verdict}; chosen: {option} x {nodes} nodes").format(
            verdict=verdict, option=best.label or best.key, nodes=nodes
        )
    )
    return r, "slurm" if kind == "onprem" else "cloud"


def _cheapest(options: list[PlanOption]) -> PlanOption | None:
    def cost(o: PlanOption) -> float:
        row = o.chosen()
        return row.cost_per_run if row and row.cost_per_run is not None else float("inf")

    return min(options, key=cost) if options else None


def for_own_cluster(job: Job) -> Resources:
    """Slurm without a plan: your own nodes, no catalogued price."""
    r = Resources(nodes=job.nodes, gpus_per_node=job.gpus_per_node, hours=job.hours)
    r.hours_source = msg("the job's `hours`") if job.hours else ""
    r.cost_source = msg("unknown: {reason}").format(
        reason=msg("your own cluster has no price in the catalog (use --plan for its TCO)")
    )
    return r
