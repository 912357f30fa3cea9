"""`dcgmi nvlink --link-status`: read from a file or a capture, judged per GPU with the model's NVLink
expectation (catalog: nvlink_bandwidth_gb_s)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuwise.advise.engine import registry, run_rules
from gpuwise.capture.host import CaptureHost
from gpuwise.facts.dcgm_nvlink import parse_dcgm_nvlink
from gpuwise.facts.evidence import collect_evidence, detect_kinds
from gpuwise.facts.models import Facts, Gpu
from tests.advise.capture_kit import make_capture

RECORDING = Path(__file__).parent.parent / "fixtures" / "evidence" / "dcgm"
ALL_DOWN = (RECORDING / "dcgm-issue198_nvlink-link-status_all-down.txt").read_text(encoding="utf-8")
MIXED = """\
+----------------------+
|  NvLink Link Status  |
+----------------------+
GPUs:
    gpuId 0:
        U U U U U U U U U U U U U U U U U U
    gpuId 1:
        U U U U U U U U U U U U U U U U D D
NvSwitches:
    physicalId 8:
        U U U U D D D D _ _ _ _
Key: Up=U, Down=D, Disabled=X, Not Supported=_
"""


def _judge(text: str, names: dict[int, str] | None = None):
    facts = Facts()
    facts.gpus = [
        Gpu(index=i, name=n, pci_bus_id=f"00000000:{0x18 + i:02X}:00.0") for i, n in (names or {}).items()
    ]
    facts.evidence.dcgm_nvlink = [parse_dcgm_nvlink(text, "dcgmi-nvlink-link-status")]
    found = run_rules(facts, None, "onprem", [registry()["gpu.dcgm_nvlink"]])
    return found[0] if found else None


def test_reads_gpus_and_switches():
    nv = parse_dcgm_nvlink(MIXED, "f")
    assert nv.gpus == {0: "U" * 18, 1: "U" * 16 + "DD"} and nv.switches == {"8": "UUUUDDDD____"}
    assert detect_kinds(MIXED) == ["dcgm-nvlink"] and detect_kinds(ALL_DOWN) == ["dcgm-nvlink"]


def test_some_links_down_fails_naming_the_gpu_by_index_and_bus_id():
    f = _judge(MIXED, {0: "NVIDIA H100 80GB HBM3", 1: "NVIDIA H100 80GB HBM3"})
    assert f.status == "fail" and "GPU 1 (00000000:19:00.0)" in f.recommendation.text
    assert "GPU 0 (00000000:18:00.0): 18 up, 0 down of 18 links" in [e.value for e in f.evidence]


@pytest.mark.parametrize(
    "model,status",
    [("NVIDIA H100 80GB HBM3", "fail"), ("NVIDIA H100 PCIe", "info"), (None, "warn")],
    ids=["sxm-needs-nvlink", "pcie-bridge-only", "model-unknown"],
)
def test_every_link_down_is_judged_with_the_models_nvlink(model, status):
    f = _judge(ALL_DOWN, {0: model, 1: model} if model else None)
    assert f.status == status


def test_switch_ports_down_alone_are_not_a_fault():
    text = MIXED.replace("U U U U U U U U U U U U U U U U D D", "U " * 17 + "U")
    f = _judge(text, {0: "NVIDIA H100 80GB HBM3", 1: "NVIDIA H100 80GB HBM3"})
    assert f.status == "pass"  # unused NVSwitch trunk ports are Down on a single-node HGX


def test_only_not_supported_links_give_no_finding():
    text = "NvLink Link Status\nGPUs:\n    gpuId 0:\n        _ _ _ _\nKey: Up=U, Down=D\n"
    assert _judge(text) is None


def test_capture_reads_it_or_says_why_not(tmp_path):
    ok = make_capture(
        tmp_path / "ok", {"dcgmi-version": "dcgmi  version: 3.3.7\n", "dcgmi-nvlink-link-status": MIXED}
    )
    ev = collect_evidence(CaptureHost(ok))
    assert ev.dcgm_nvlink and ev.dcgm_nvlink[0].gpus[1].endswith("DD")
    old = make_capture(tmp_path / "old", {"dcgmi-version": "dcgmi  version: 3.3.7\n"})
    assert collect_evidence(CaptureHost(old)).unknown["dcgm_nvlink"].kind == "not_captured"
    failed = make_capture(
        tmp_path / "failed",
        {
            "dcgmi-version": "dcgmi  version: 3.3.7\n",
            "dcgmi-nvlink-link-status": "Error: unable to connect\n",
        },
        rcs={"dcgmi-nvlink-link-status": 255},
    )
    assert collect_evidence(CaptureHost(failed)).unknown["dcgm_nvlink"].kind == "failed"
    garbage = make_capture(
        tmp_path / "garbage",
        {"dcgmi-version": "x\n", "dcgmi-nvlink-link-status": "NvLink Link Status\nGPUs:\n"},
    )
    assert collect_evidence(CaptureHost(garbage)).unknown["dcgm_nvlink"].kind == "unparsable"
