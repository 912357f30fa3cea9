"""Report model, renderers and compare, on hand-built facts (no parsers involved)."""

from __future__ import annotations

import json

import pytest

from gpuwise.errors import UserInputError
from gpuwise.pipeline import diagnose, resolve_env
from gpuwise.report.compare import compare_files
from gpuwise.report.formats import render
from gpuwise.report.model import REPORT_SCHEMA, Report, exit_code_for
from gpuwise.report.views.compare import compare_view
from gpuwise.report.views.doctor import doctor_view
from tests.advise.factories import bench, cpu_vm, healthy_node, measurement


def _broken_node():
    f = healthy_node()
    f.gpus[2].retired_pages_dbe = 3
    f.gpus[0].persistence_mode = False
    f.network.nccl_env["NCCL_ALGO"] = "Tree"
    return f


def test_report_json_round_trip_and_ranking():
    report = diagnose(_broken_node(), None, "onprem")
    data = report.to_json_dict()
    assert data["schema"] == REPORT_SCHEMA
    again = Report.model_validate(json.loads(json.dumps(data)))
    assert [f.id for f in again.findings] == [f.id for f in report.findings]
    # severity first (fail, warn, info, pass), then priority within a severity
    order = [
        (("fail", "warn", "info", "pass").index(f.status), ("high", "medium", "low").index(f.priority))
        for f in report.findings
    ]
    assert order == sorted(order)
    assert report.findings[0].id == "gpu.retired_pages" and report.summary.exit_code == 2


def test_exit_codes():
    assert exit_code_for(diagnose(healthy_node(), None, "onprem").findings) == 0
    assert diagnose(cpu_vm(), None, "cloud").summary.exit_code == 0


def test_env_override_and_detection():
    facts = cpu_vm()
    assert resolve_env(facts).kind == "cloud" and not resolve_env(facts).overridden
    e = resolve_env(facts, "onprem")
    assert e.kind == "onprem" and e.detected == "cloud" and e.overridden


def test_text_and_markdown_show_the_plan():
    report = diagnose(_broken_node(), None, "onprem")
    text = render(doctor_view(report), "text")
    assert (
        "Top actions" in text and "Critical" in text and "[FAIL · high] GPU memory pages were retired" in text
    )
    assert "gpus[2].retired_pages_dbe = 3" in text and "Checked and OK" in text
    # the top actions are the first findings in rank order: critical ones before any warning or advice
    top = text.split("Top actions", 1)[1].split("Critical", 1)[0]
    assert "1. [FAIL]" in top and "[INFO]" not in top.split("2.")[0]
    md = render(doctor_view(report), "md")
    assert "## Critical" in md and "gpus[2].retired_pages_dbe = 3" in md and "NCCL_ALGO" in md


def test_cloud_text_says_what_to_do_instead():
    facts = healthy_node()
    facts.gpus[0].pcie.width_current = 8
    text = render(doctor_view(diagnose(facts, None, "cloud")), "text")
    assert "can change here: no" in text and "instead:" in text


def test_compare_two_reports(tmp_path):
    a = diagnose(healthy_node(), bench(measurement("h2d_pinned", "host-device", 50.0, 63.0, 0.87)), "onprem")
    b_facts = healthy_node()
    b_facts.gpus[0].pcie.width_current = 8
    b = diagnose(b_facts, bench(measurement("h2d_pinned", "host-device", 25.0, 63.0, 0.87)), "onprem")
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a.to_json_dict()))
    pb.write_text(json.dumps(b.to_json_dict()))
    comp = compare_files(pa, pb)
    assert [(d.path, d.a, d.b) for d in comp.facts] == [("gpus[0].pcie.width_current", 16, 8)]
    assert comp.facts[0].layer == "hardware"
    (m,) = comp.measurements
    assert m.ratio == pytest.approx(0.5)
    only_b = {f.id for f in comp.findings if f.only_in == "B"}
    assert {"pcie.width_below_max", "bench.host_device_low"} <= only_b
    text = render(compare_view(comp), "text")
    assert "0.50x" in text and "Facts that differ — hardware" in text
    assert "| gpus[0].pcie.width_current | 16 | 8 |" in render(compare_view(comp), "md")


def test_compare_bench_files(tmp_path):
    a = bench(measurement("matmul_bf16", "compute", 700.0, 989.0, 0.803, "TFLOP/s"))
    b = bench(measurement("matmul_bf16", "compute", 770.0, 989.0, 0.803, "TFLOP/s"))
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a.to_json_dict()))
    pb.write_text(json.dumps(b.to_json_dict()))
    comp = compare_files(pa, pb)
    assert comp.kind_a == "bench" and comp.measurements[0].ratio == pytest.approx(1.1)


def test_compare_bad_files(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{not json")
    with pytest.raises(UserInputError, match="not readable JSON"):
        compare_files(p, p)
    p.write_text(json.dumps({"schema": "other/1"}))
    with pytest.raises(UserInputError, match="expected 'gpuwise-report/1'"):
        compare_files(p, p)
