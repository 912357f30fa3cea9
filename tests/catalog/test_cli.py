"""`gpuwise catalog ...` through Typer's CliRunner on the real app."""

from __future__ import annotations

import json
import os
import re

import pytest
from typer.testing import CliRunner

from gpuwise.catalog import offers
from gpuwise.cli import app
from gpuwise.errors import DataValidationError, UserInputError

runner = CliRunner()

# A small SkyPilot v8 vms.csv: AWS's column set, GpuInfo quoted with commas inside, per-AZ rows, a CPU row.
SKYPILOT_VMS = """InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone,Arch
m5.large,,,2.0,8.0,,0.096,0.035,us-east-1,use1-az1,x86_64
p4d.24xlarge,A100,8.0,96.0,1152.0,"{'Gpus': [{'Name': 'A100', 'Count': 8}], 'TotalGpuMemoryInMiB': 327680}",21.957642,6.289,us-east-1,use1-az1,x86_64
p4d.24xlarge,A100,8.0,96.0,1152.0,"{'Gpus': [{'Name': 'A100', 'Count': 8}], 'TotalGpuMemoryInMiB': 327680}",21.957642,14.1051,us-east-1,use1-az2,x86_64
g5.48xlarge,A10G,8.0,192.0,768.0,"{'Gpus': [{'Name': 'A10G', 'Count': 8}]}",16.288,,us-east-1,use1-az1,x86_64
"""


def test_offers_gpu_a100_lists_tencent_gt4_and_aws_p4d_with_network():
    result = runner.invoke(app, ["catalog", "offers", "--gpu", "A100"], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    gt4 = [line for line in lines if "GT4.41XLARGE948" in line]
    p4d = [line for line in lines if "p4d.24xlarge" in line and " aws " in line]
    assert gt4 and "50 vpc-tcp" in gt4[0]
    assert p4d and "400 efa" in p4d[0]
    assert "GT4.4XLARGE96" in result.output and "A10G" not in result.output


def test_offers_json_has_network_and_sources():
    result = runner.invoke(app, ["catalog", "offers", "--gpu", "A100", "--json"])
    assert result.exit_code == 0
    doc = json.loads(result.output)
    assert doc["schema"] == "gpuwise-catalog/1" and doc["kind"] == "offers"
    data = doc["offers"]
    gt4 = next(o for o in data if o["instance_type"] == "GT4.41XLARGE948")
    assert gt4["network_gbps"] == 50 and gt4["resolved_gpu"] == "A100-SXM-40GB" and gt4["price"] == 237.51
    assert gt4["monthly_price"] == 114016 and gt4["currency"] == "CNY"
    assert all(o["price_source"] for o in data)
    assert all(o["as_of"] or "no date" in o["notes"] for o in data if o["price"] is not None)
    assert {o["provider"] for o in data} >= {"aws", "lambda", "coreweave", "runpod", "tencent"}


def test_offers_filters_combine():
    result = runner.invoke(
        app, ["catalog", "offers", "--provider", "tencent", "--min-network-gbps", "100", "--json"]
    )
    types = {o["instance_type"] for o in json.loads(result.output)["offers"]}
    assert "PNV4.56XLARGE932" in types and "GT4.41XLARGE948" not in types


def test_gpus_table_and_json():
    result = runner.invoke(app, ["catalog", "gpus"])
    assert result.exit_code == 0 and "H100-SXM" in result.output and "989" in result.output
    data = json.loads(runner.invoke(app, ["catalog", "gpus", "--json"]).output)["gpus"]
    h100 = next(d for d in data if d["key"] == "H100-SXM")
    assert h100["bf16_tflops"] == 989 and h100["source"] and re.fullmatch(r"\d{4}-\d\d-\d\d", h100["as_of"])


def test_fabrics_table_and_json():
    result = runner.invoke(app, ["catalog", "fabrics"])
    assert result.exit_code == 0 and "ib-ndr" in result.output and "pcie5-x16" in result.output
    data = {
        f["key"]: f
        for f in json.loads(runner.invoke(app, ["catalog", "fabrics", "--json"]).output)["fabrics"]
    }
    assert data["pcie5-x16"]["bandwidth_gb_s"] == 63 and data["ib-ndr"]["bandwidth_gbps"] == 400


def test_show_resolves_reported_names_instance_types_and_fabrics():
    gpu = json.loads(runner.invoke(app, ["catalog", "show", "NVIDIA A100-SXM4-40GB", "--json"]).output)
    assert gpu["kind"] == "gpu" and gpu["gpu"]["key"] == "A100-SXM-40GB" and gpu["gpu"]["source"]
    text = runner.invoke(app, ["catalog", "show", "Tesla V100-SXM2-32GB"]).output
    assert "V100-SXM2-32GB" in text and "source" in text
    offer = json.loads(runner.invoke(app, ["catalog", "show", "gt4.41xlarge948", "--json"]).output)
    assert offer["kind"] == "offer" and offer["offers"][0]["network_gbps"] == 50
    fabric = json.loads(runner.invoke(app, ["catalog", "show", "ib-ndr", "--json"]).output)
    assert fabric["fabric"]["bandwidth_gbps"] == 400


def test_show_unknown_name_is_an_error_that_lists_candidates():
    result = runner.invoke(app, ["catalog", "show", "H100"])
    assert isinstance(result.exception, UserInputError)
    message = str(result.exception)
    assert "H100-SXM" in message and "H100-PCIE" in message and "H200" not in message.split("To fix")[0]


def test_broken_user_offers_file_fails_the_command_and_is_untouched(isolated_config):
    isolated_config.mkdir(parents=True)
    path = isolated_config / "mine.csv"
    path.write_text("InstanceType,Fabric\np5.48xlarge,infinband\n")
    before = (path.read_bytes(), os.stat(path).st_mtime_ns)
    result = runner.invoke(app, ["catalog", "offers"])
    assert isinstance(result.exception, DataValidationError)
    assert f"{path}:2: column 'Fabric'" in str(result.exception) and 'did you mean "infiniband"' in str(
        result.exception
    )
    assert (path.read_bytes(), os.stat(path).st_mtime_ns) == before


def test_import_skypilot_writes_a_valid_offers_file(tmp_path, isolated_config):
    source = tmp_path / "catalogs" / "v8" / "aws" / "vms.csv"
    source.parent.mkdir(parents=True)
    source.write_text(SKYPILOT_VMS)
    result = runner.invoke(app, ["catalog", "import-skypilot", str(source)])
    assert result.exit_code == 0, result.output
    written = isolated_config / "aws-skypilot.csv"
    assert "wrote 3 offers" in result.output and written.is_file()
    imported = offers.read_offers_file(written)
    assert {(o.instance_type, o.zone) for o in imported} == {
        ("p4d.24xlarge", "use1-az1"),
        ("p4d.24xlarge", "use1-az2"),
        ("g5.48xlarge", "use1-az1"),
    }
    p4d = next(o for o in imported if o.zone == "use1-az2")
    assert (p4d.provider, p4d.price, p4d.spot_price, p4d.vcpus) == ("aws", 21.957642, 14.1051, 96)
    assert p4d.price_source.startswith("SkyPilot catalog vms.csv") and p4d.as_of is not None
    # the imported per-AZ rows now show up next to the shipped ones
    listed = json.loads(
        runner.invoke(app, ["catalog", "offers", "--gpu", "A100", "--provider", "aws", "--json"]).output
    )["offers"]
    assert {o["zone"] for o in listed} >= {"use1-az1", "use1-az2"}
    # re-importing may refresh gpuwise's own file
    assert runner.invoke(app, ["catalog", "import-skypilot", str(source)]).exit_code == 0


def test_import_never_overwrites_a_users_own_file(tmp_path):
    source = tmp_path / "aws" / "vms.csv"
    source.parent.mkdir()
    source.write_text(SKYPILOT_VMS)
    target = tmp_path / "hand-made.csv"
    target.write_text("InstanceType,Price,PriceSource\nmy-box,1.0,my spreadsheet\n")
    before = target.read_bytes()
    result = runner.invoke(app, ["catalog", "import-skypilot", str(source), "-o", str(target)])
    assert isinstance(result.exception, UserInputError) and "left untouched" in str(result.exception)
    assert target.read_bytes() == before
    forced = runner.invoke(app, ["catalog", "import-skypilot", str(source), "-o", str(target), "--force"])
    assert forced.exit_code == 0 and len(offers.read_offers_file(target)) == 3


@pytest.mark.parametrize("args", [["catalog", "--help"], ["catalog", "fetch", "tencent", "--help"]])
def test_help_works(args):
    assert runner.invoke(app, args).exit_code == 0
