"""What spot capacity costs a run besides its price: interruptions, the work each one loses, and whether
the provider sells spot capacity for several nodes at once (plan_defaults.yaml `spot:`, each sourced).

perf.py turns these into time: a job of n nodes is interrupted n·rate times per hour and each
interruption loses `lost_hours` (half a checkpoint interval plus the restart), so its wall time is
T0 / (1 − n·rate·lost_hours).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuwise.i18n import msg
from gpuwise.plan.defaults import PlanDefaults
from gpuwise.plan.workload import Workload


@dataclass(frozen=True)
class SpotTerms:
    interruptions_per_node_hour: float
    lost_hours: float  # work lost per interruption: half a checkpoint interval + the restart
    max_nodes: float  # 1 where the provider sells no spot capacity for several nodes at once
    description: str  # provenance with its sources, for the plan's sources (-v, JSON)
    multi_node_source: str
    short: str  # the same numbers without the sources, for the decision's caveat


def spot_terms(provider: str | None, wl: Workload, d: PlanDefaults) -> SpotTerms:
    per_day = float(d.value("spot.interruptions_per_node_day"))
    tr = wl.training
    interval = tr.checkpoint_interval_minutes or float(d.value("spot.checkpoint_interval_minutes"))
    restart = tr.restart_minutes if tr.restart_minutes is not None else float(d.value("spot.restart_minutes"))
    providers = d.data.get("spot", {}).get("providers") or {}
    entry = providers.get(str(provider or "").lower()) or d.data["spot"]["default_provider"]
    multi = bool(entry.get("multi_node"))
    lost = (interval / 2.0 + restart) / 60.0
    where = (
        msg("workload")
        if tr.checkpoint_interval_minutes or tr.restart_minutes is not None
        else msg("defaults")
    )
    desc = msg(
        "{rate:g} interruptions per node-day ({source}); each loses half a {interval:g}-minute checkpoint "
        "interval + a {restart:g}-minute restart ({where})"
    ).format(
        rate=per_day,
        source=d.source("spot.interruptions_per_node_day"),
        interval=interval,
        restart=restart,
        where=where,
    )
    short = msg(
        "{rate:g} interruptions per node-day, {interval:g}-minute checkpoints, {restart:g}-minute restarts"
    ).format(rate=per_day, interval=interval, restart=restart)
    return SpotTerms(
        per_day / 24.0, lost, math.inf if multi else 1.0, desc, str(entry.get("source", "")), short
    )
