"""What every launch adds: resources and cost (plan's model), transfer estimate, migration check."""

from __future__ import annotations

import json

import pytest

from gpuwise.capture.host import CaptureHost
from gpuwise.errors import UserInputError
from gpuwise.facts.collect import collect_facts
from gpuwise.launch import resources, transfer
from gpuwise.launch.job import Dataset, ImageVersions, load_job
from gpuwise.launch.migration import check_migration, target_software
from gpuwise.plan.currency import conversion
from tests.launch.kit import CAPTURES, EXAMPLES, gpuwise, write_job


@pytest.fixture(scope="module")
def plan_json(tmp_path_factory):
    out = tmp_path_factory.mktemp("gwla-plan") / "plan.json"
    r = gpuwise("plan", str(EXAMPLES / "llm-13b-finetune.yaml"), "--format", "json", "-o", str(out))
    assert r.exit_code == 0, r.output
    return out


def test_offer_cost_is_price_times_nodes_times_hours(tmp_path):
    job = load_job(write_job(tmp_path / "j.yaml", hours=10))
    r = resources.from_offer("aws:p4d.24xlarge", job)
    assert (r.instance_type, r.gpus_per_node, r.fabric) == ("p4d.24xlarge", 8, "efa")
    assert r.run_cost == pytest.approx(r.node_hour_price * 2 * 10)
    assert "x 2 nodes x 10 h" in r.cost_source


def test_unknown_offer_says_where_to_look(tmp_path):
    job = load_job(write_job(tmp_path / "j.yaml"))
    with pytest.raises(UserInputError, match="no p9.huge offer from aws") as exc:
        resources.from_offer("aws:p9.huge", job)
    assert "gpuwise catalog offers" in str(exc.value)
    with pytest.raises(UserInputError, match="PROVIDER:INSTANCE"):
        resources.from_offer("p4d.24xlarge", job)


def test_plan_choice_is_the_cheapest_feasible_cloud_option(plan_json, tmp_path):
    plan = json.loads(plan_json.read_text())
    job = load_job(write_job(tmp_path / "j.yaml"))
    r, implied = resources.from_plan(plan_json, job)
    assert implied == "cloud" and plan["decision"]["verdict"] == "cloud"
    feasible = [o for o in plan["options"] if o["kind"] == "cloud" and o["chosen_nodes"]]

    def cost(o):
        return next(p["cost_per_run"] for p in o["per_nodes"] if p["nodes"] == o["chosen_nodes"])

    best = min(feasible, key=cost)
    assert (r.provider, r.instance_type, r.nodes) == (
        best["provider"],
        best["instance_type"],
        best["chosen_nodes"],
    )
    assert r.run_cost == cost(best)
    row = next(p for p in best["per_nodes"] if p["nodes"] == best["chosen_nodes"])
    assert r.hours == pytest.approx(row["time_to_train_days"] * 24)


def test_not_a_plan_is_refused(tmp_path):
    bad = tmp_path / "p.json"
    bad.write_text('{"schema": "gpuwise-report/1"}')
    with pytest.raises(UserInputError, match="not a gpuwise-plan/1"):
        resources.from_plan(bad, load_job(write_job(tmp_path / "j.yaml")))


def test_local_dataset_is_measured_and_its_upload_timed(tmp_path):
    data = tmp_path / "ds"
    data.mkdir()
    (data / "a.bin").write_bytes(b"x" * 1_000_000)
    (data / "b.bin").write_bytes(b"x" * 3_000_000)
    ds = Dataset(source=str(data), link_gbps=0.001)  # 1 Mbit/s
    res = resources.Resources(provider="aws", instance_type="p4d.24xlarge", network_gbps=400, hours=0.01)
    est = transfer.estimate(ds, res, False)
    assert est.size_bytes == 4_000_000 and "2 files" in est.size_source
    assert est.hours == pytest.approx(4_000_000 * 8 / 1e6 / 3600)  # 32 s
    assert est.cost == 0.0 and "Data Transfer IN" in est.cost_source
    assert est.warning and "more than 10% of the 0.01 h" in est.warning


def test_object_store_is_bounded_by_the_data_path_and_priced_in_the_runs_currency():
    ds = Dataset(source="s3://bkt/x", size_gb=500)
    res = resources.Resources(provider="tencent", instance_type="GT4.41XLARGE948", network_gbps=50,
                              hours=100, currency="CNY")  # fmt: skip
    est = transfer.estimate(ds, res, False)
    # not the nodes' 50 Gbit/s network: an S3 bucket reaches a Tencent instance over the internet
    assert est.path == "internet" and est.link_gbps == 1.0 and est.link_source.startswith("assumption")
    assert est.hours == pytest.approx(500e9 * 8 / 1e9 / 3600)
    rate = conversion("USD", "CNY", {})
    assert est.currency == "CNY" and est.cost == pytest.approx(45.0 * rate.value)
    assert "https://aws.amazon.com/s3/pricing/" in est.cost_source and "1 USD = " in est.cost_source
    # the same bucket read from p5.48xlarge in its region: free, bounded by the reader, not 3,200 Gbit/s EFA
    aws = resources.Resources(provider="aws-capacity-blocks", instance_type="p5.48xlarge",
                              network_gbps=3200, fabric="efa", hours=9, currency="USD")  # fmt: skip
    same_cloud = transfer.estimate(ds, aws, False)
    assert same_cloud.path == "same-region" and same_cloud.link_gbps < 3200
    assert same_cloud.cost == 0.0 and same_cloud.cost_source.startswith("free within the bucket's region")
    assert same_cloud.hours * 3600 > 30  # 500 GB is not "moved in 0 s"


def test_unknown_size_or_link_is_said_not_guessed():
    res = resources.Resources(provider="tencent", instance_type="X", region="ap-guangzhou", hours=10)
    est = transfer.estimate(Dataset(source="cos://b-1/x", region="ap-singapore"), res, False)
    assert est.hours is None and "dataset.size_gb" in est.warning
    assert est.cost is None and "egress_price_per_gb" in est.cost_source


def test_slurm_reads_a_shared_path_in_place(tmp_path):
    est = transfer.estimate(Dataset(source="10.0.0.4:/export/in1k"), resources.Resources(), True)
    assert est.copy_needed is False and est.hours == 0.0


@pytest.fixture(scope="module")
def h200_facts():
    return collect_facts(CaptureHost(CAPTURES / "h200-1gpu-kvm-vm"))


def test_migration_same_versions_pass_and_a_major_cuda_change_fails(h200_facts):
    sw = h200_facts.software
    target = target_software(
        ImageVersions(torch=sw.torch_version, cuda="99.0", driver=sw.driver_version), None
    )
    found = {m.what: m for m in check_migration(h200_facts, target)}
    assert (sw.torch_version, sw.torch_cuda) == ("2.11.0+cu130", "13.0")  # what the capture recorded
    assert found["torch"].status == "pass" and found["NVIDIA driver"].status == "pass"
    assert found["CUDA (torch build)"].status == "fail"
    assert "13.0 -> 99.0" in found["CUDA (torch build)"].text
    assert "cuda-compatibility" in found["CUDA (torch build)"].source


def test_migration_minor_torch_change_warns(h200_facts):
    found = {
        m.what: m for m in check_migration(h200_facts, {"torch_version": "2.12.1", "torch_nccl": "2.28.9"})
    }
    assert found["torch"].status == "warn" and "loss curve" in found["torch"].text
    assert found["NCCL (torch)"].status == "pass"


def test_migration_against_a_capture_of_the_target(h200_facts):
    """H200 GPU node -> the CPU-only VM: torch differs, the target has no driver or NCCL to compare."""
    cpu = collect_facts(CaptureHost(CAPTURES / "cpu-vm-kvm-docker"))
    found = {m.what: m for m in check_migration(h200_facts, target_software(None, cpu))}
    assert found["torch"].status == "warn" and found["torch"].target_value == "2.13.0+cpu"
    assert found["NVIDIA driver"].status == "unknown" and found["NVIDIA driver"].source_value == "580.159.04"
    assert all(m.source.startswith("https://") for m in found.values())


def test_migration_without_target_versions_says_how_to_check(h200_facts):
    (only,) = check_migration(h200_facts, target_software(None, None))
    assert only.status == "unknown" and "image_versions" in only.source


def test_old_driver_for_torch_cuda_is_critical(h200_facts):
    found = check_migration(h200_facts, {"cuda_driver_version": "11.8", "torch_cuda": "12.4"})
    assert any(m.what == "driver vs torch CUDA" and m.status == "fail" for m in found)


def test_launch_from_a_cny_plan_shows_the_plans_staging_figure(tmp_path):
    """A CNY plan of an S3 data set, then `launch --plan`: the same path, time and cost, in CNY."""
    text = (EXAMPLES / "llm-13b-finetune.yaml").read_text(encoding="utf-8")
    wl = tmp_path / "wl.yaml"
    wl.write_text(text.replace("size_gb: 4", "size_gb: 120").replace("currency: USD", "currency: CNY"))
    opts = tmp_path / "o.yaml"
    opts.write_text("cloud:\n  providers: [aws]\n  pricing: [on_demand]\n  max_offers: 3\nonprem: []\n")
    out = tmp_path / "plan.json"
    r = gpuwise("plan", str(wl), "--options", str(opts), "--format", "json", "-o", str(out))
    assert r.exit_code in (0, 1), r.output
    plan = json.loads(out.read_text())
    staged = [o for o in plan["options"] if o["data_staging"]]
    assert staged and all(o["data_staging"]["currency"] == "CNY" for o in staged)
    job = load_job(EXAMPLES / "job-llm.yaml")
    res, _target = resources.from_plan(out, job)
    best = next(
        o for o in plan["options"] if o["instance_type"] == res.instance_type and o["region"] == res.region
    )
    est = transfer.estimate(job.dataset, res, False)
    s = best["data_staging"]
    assert est.path == s["path"] and est.link_gbps == s["gbps"]
    assert est.hours == pytest.approx(s["hours"], abs=1e-4) and est.currency == "CNY"
    assert est.cost == pytest.approx(s["cost"], abs=0.01)
    # the 120 GB are not "moved in 0 s" at the 3,200 Gbit/s EFA fabric of a p5
    assert est.hours * 3600 >= 120e9 * 8 / 100e9 - 1
