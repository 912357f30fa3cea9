"""Data staging in the plan (plan/staging.py): its own line, added to the time to result, in the plan's currency."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuwise.plan.currency import conversion
from gpuwise.plan.export import plan_to_json
from gpuwise.plan.planner import make_plan

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _plan(tmp_path: Path, **replace: str):
    text = (EXAMPLES / "llm-13b-finetune.yaml").read_text(encoding="utf-8")
    for old, new in replace.items():
        text = text.replace(old, new)
    wl = tmp_path / "wl.yaml"
    wl.write_text(text, encoding="utf-8")
    opts = tmp_path / "o.yaml"
    opts.write_text("cloud:\n  providers: [aws]\n  pricing: [on_demand]\n  max_offers: 20\nonprem: []\n")
    return make_plan(wl, opts)


def test_staging_is_added_to_the_time_to_result_and_converted(tmp_path):
    plan = _plan(tmp_path, **{"size_gb: 4": "size_gb: 120", "currency: USD": "currency: CNY"})
    staged = [o for o in range(len(plan.rows)) if plan.staging[o] is not None and plan.chosen[o] >= 0]
    assert staged
    rate = conversion("USD", "CNY", {}).value
    kinds = set()
    for o in staged:
        s, k = plan.staging[o], int(plan.chosen[o])
        kinds.add(s.path)
        train = plan.rows[o].lead_time_days + plan.hours(o, k) / 24
        assert plan.days_to_result(o) == pytest.approx(train + s.hours / 24)
        assert s.currency == "CNY"
        if s.path == "internet":  # a bucket in us-east-1 read from another region: S3's 0.02 USD/GB
            assert s.cost == pytest.approx(120 * 0.02 * rate) and s.hours == pytest.approx(120 * 8 / 3600)
        if s.path == "same-region":
            assert s.cost == 0.0 and s.gbps < 3200  # the reader bounds it, never the EFA fabric
    assert {"internet", "same-region"} <= kinds
    doc = plan_to_json(plan)
    assert all("data_staging" in o for o in doc["options"])
    assert any(o["data_staging"] and o["data_staging"]["currency"] == "CNY" for o in doc["options"])


def test_no_source_means_no_staging(tmp_path):
    plan = _plan(tmp_path, **{"  source: s3://my-bucket/datasets/sft-mix": "", "  region: us-east-1": ""})
    assert all(s is None for s in plan.staging)
    assert all(o["data_staging"] is None for o in plan_to_json(plan)["options"])
