"""What gpuwise reads back from a plan (PLAN_SCHEMA, written by plan/export.py and plan/serving/export.py):
`gpuwise launch --plan` takes the recommended option from it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag

from gpuwise.documents.ids import PLAN_SCHEMA
from gpuwise.documents.view import View


class NodeCount(View):
    """One node count of an option: its time to train and cost per run (null when not feasible)."""

    nodes: int
    time_to_train_days: float | None = None
    cost_per_run: float | None = None


class PlanOption(View):
    """One way to run the workload: a cloud offer (kind "cloud") or a machine to build ("onprem")."""

    key: str
    kind: Literal["cloud", "onprem"]
    label: str | None = None
    pricing: str | None = None  # "on_demand" | "spot" | "reserved" ...
    gpu: str | None = None
    gpus_per_node: int | None = None
    provider: str | None = None
    instance_type: str | None = None
    region: str | None = None
    currency: str | None = None
    node_hour_price: float | None = None
    provenance: dict[str, str | None] = Field(default_factory=dict)  # figure -> where it came from
    chosen_nodes: int | None = None  # the node count it recommends; null: no feasible count
    per_nodes: list[NodeCount] = Field(default_factory=list)

    def price_source(self) -> str | None:
        return self.provenance.get("price")

    def chosen(self) -> NodeCount | None:
        """The per-node-count row of its chosen node count."""
        return next((p for p in self.per_nodes if p.nodes == self.chosen_nodes), None)


class Decision(View):
    verdict: str = "undecided"  # "rent" | "build" | "undecided" | ...


class TrainingPlan(View):
    """A training plan (no "kind" field): rent or build, and the options it compared."""

    schema_: Literal[PLAN_SCHEMA] = Field(alias="schema")  # type: ignore[valid-type]
    kind: Literal["training"] = "training"
    options: list[PlanOption] = Field(default_factory=list)
    decision: Decision = Field(default_factory=Decision)


class ServingPlan(View):
    """A serving plan ("kind": "inference"): its options are serving strategies, nothing to launch."""

    schema_: Literal[PLAN_SCHEMA] = Field(alias="schema")  # type: ignore[valid-type]
    kind: Literal["inference"]
    options: list[dict[str, Any]] = Field(default_factory=list)


def _plan_kind(data: Any) -> str:
    kind = data.get("kind", "training") if isinstance(data, dict) else getattr(data, "kind", "training")
    return kind if kind in ("training", "inference") else "training"


PlanDocument = Annotated[
    Annotated[TrainingPlan, Tag("training")] | Annotated[ServingPlan, Tag("inference")],
    Discriminator(_plan_kind),
]
