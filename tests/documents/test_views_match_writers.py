"""A reader's view names only fields its writer has: a field renamed or dropped on the writer's side
fails here, not in a user's history or launch. Writers with a pydantic model are compared model to
model; plan and launch (dicts) through the document the command writes."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from gpuwise.cli import app
from gpuwise.documents import doctor, fleet, launch, plan, stability, tune
from gpuwise.fleet import model as fleet_model
from gpuwise.report.model import Report
from gpuwise.stability import model as stability_model
from gpuwise.tune import model as tune_model

EXAMPLES = Path(__file__).parents[2] / "examples"
PAIRS = [  # (view, the writer's model)
    (doctor.DoctorReport, Report),
    (tune.TuneDocument, tune_model.TuneResult),
    (tune.TuneTrial, tune_model.TrialRecord),
    (fleet.FleetDocument, fleet_model.FleetReport),
    (fleet.FleetNode, fleet_model.NodeStatus),
    (fleet.FleetDistribution, fleet_model.Distribution),
    (fleet.NodeValue, fleet_model.NodeValue),
    (fleet.FleetOutlier, fleet_model.Outlier),
    (fleet.FleetDrift, fleet_model.Drift),
    (fleet.FleetCollective, fleet_model.Collective),
    (stability.StabilityDocument, stability_model.StabilityReport),
    (stability.StabilityMetric, stability_model.MetricResult),
    (stability.MetricName, stability_model.MetricInfo),
    (stability.MetricSummary, stability_model.Summary),
    (stability.StabilityLayer, stability_model.LayerVerdict),
]


def _names(model) -> set[str]:
    return {f.alias or name for name, f in model.model_fields.items() if not f.exclude}


def test_every_field_of_a_view_is_a_field_of_its_writers_model():
    missing = {view.__name__: sorted(_names(view) - _names(writer)) for view, writer in PAIRS}
    assert {k: v for k, v in missing.items() if v} == {}


def test_every_field_of_the_plan_view_is_in_a_plan_gpuwise_writes():
    r = CliRunner().invoke(app, ["plan", str(EXAMPLES / "resnet50-imagenet.yaml"), "--format", "json"])
    doc = json.loads(r.stdout)
    assert _names(plan.TrainingPlan) - {"kind"} <= set(doc)
    option = next(o for o in doc["options"] if o["chosen_nodes"])
    assert _names(plan.PlanOption) <= set(option)
    assert _names(plan.NodeCount) <= set(option["per_nodes"][0])
    assert _names(plan.Decision) <= set(doc["decision"])


def test_every_field_of_the_launch_view_is_in_a_record_gpuwise_writes(tmp_path):
    out = tmp_path / "gw-documents-launch"
    r = CliRunner().invoke(
        app, ["launch", str(EXAMPLES / "job-cpu.yaml"), "--target", "slurm", "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert _names(launch.LaunchRecord) <= set(json.loads((out / "launch.json").read_text()))
