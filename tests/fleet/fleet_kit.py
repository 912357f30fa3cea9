"""Build fleet directories at test time from real recordings, with described edits.

Every node starts as the capture recorded on a real H200 VM (tests/captures/h200-1gpu-kvm-vm) and
its real `gpuwise bench --quick` result, plus the real `ibstat` of a 2x ConnectX-3 FDR host
(shared fixtures, infiniband/heioy-books_ibstat_2x-connectx3-fdr.txt: 2 HCAs, 4 active ports).
Node-to-node variation: each measurement's median is drawn (seeded per node, uniformly) within
+-(max - min) / (2 sqrt(repeats)) of the recorded median, the order of the standard error of a median
of that many repeats, so the fleet's spread follows the run-to-run spread the real machine showed.

EDITS (what `fleet report` must name, and nothing else):
    node03  GPU 0 PCIe link trained at x8 instead of x16 (nvml pcie.width_current 16 -> 8)
    node07  older driver: 580.159.04 / CUDA 13.0 -> 570.172.08 / CUDA 12.8 (nvml and nvidia-smi -q -x)
    node11  slow matmul: matmul_bf16 at 80% of its recorded value (median, min and max)
    node14  one InfiniBand port down: mlx4_1 port 2 State Active -> Down, Physical state LinkUp -> Disabled
"""

from __future__ import annotations

import json
import math
import random
import shutil
import tarfile
from pathlib import Path

from tests.conftest import CAPTURES, REAL

BASE_CAPTURE = CAPTURES / "h200-1gpu-kvm-vm"
BASE_BENCH = CAPTURES / "h200-1gpu-kvm-vm.bench-quick.json"
IBSTAT = "infiniband/heioy-books_ibstat_2x-connectx3-fdr.txt"

EDITS = {
    "node03": "GPU 0 PCIe x8",
    "node07": "older driver 570.172.08",
    "node11": "slow matmul_bf16",
    "node14": "InfiniBand port mlx4_1/2 down",
}


def node_name(i: int) -> str:
    return f"node{i:02d}"


def build_fleet(root: Path, count: int = 16, edits: bool = True, tarball: bool = False) -> Path:
    """Write `count` node folders under `root` (DIR/<node>/capture/ or capture.tar.gz, bench.json)."""
    ibstat = (REAL / IBSTAT).read_text()
    bench = json.loads(BASE_BENCH.read_text())
    for i in range(1, count + 1):
        name = node_name(i)
        node = root / name
        cap = node / "capture"
        shutil.copytree(BASE_CAPTURE, cap)
        write_node(cap, name, ibstat, bench, seed=i, edit=EDITS.get(name) if edits else None)
        if tarball:
            with tarfile.open(node / "capture.tar.gz", "w:gz") as tar:
                tar.add(cap, arcname="capture")
            shutil.rmtree(cap)
    return root


def write_node(cap: Path, name: str, ibstat: str, bench: dict, seed: int, edit: str | None) -> None:
    meta = json.loads((cap / "meta.json").read_text())
    meta["hostname"] = name
    meta["commands"]["ibstat"] = {"rc": 0, "seconds": 0.01, "status": "ok"}
    (cap / "meta.json").write_text(json.dumps(meta, indent=1))
    if edit and "InfiniBand" in edit:
        ibstat = _port_down(ibstat, "mlx4_1", 2)
    (cap / "commands" / "ibstat.txt").write_text(ibstat)
    (cap / "commands" / "ibstat.rc").write_text("0")
    nvml_file, xml_file = cap / "commands" / "nvml.txt", cap / "commands" / "nvidia-smi-q-x.txt"
    nvml, xml = json.loads(nvml_file.read_text()), xml_file.read_text()
    if edit and "PCIe" in edit:
        nvml["gpus"][0]["pcie"]["width_current"] = 8
    if edit and "driver" in edit:
        nvml["driver_version"], nvml["cuda_driver_version"] = "570.172.08", "12.8"
        xml = xml.replace("<driver_version>580.159.04<", "<driver_version>570.172.08<")
        xml = xml.replace("<cuda_version>13.0<", "<cuda_version>12.8<")
    nvml_file.write_text(json.dumps(nvml, indent=1))
    xml_file.write_text(xml)
    (cap.parent / "bench.json").write_text(json.dumps(vary_bench(bench, name, seed, edit)))


def vary_bench(bench: dict, name: str, seed: int, edit: str | None) -> dict:
    rng = random.Random(seed)
    out = json.loads(json.dumps(bench))
    out["hostname"] = name
    for m in out["results"]:
        stats = m.get("stats")
        if m.get("status") != "ok" or m.get("value") is None or not stats:
            continue
        half = (stats["max"] - stats["min"]) / (2 * math.sqrt(max(stats["repeats"], 1)))
        factor = rng.uniform(m["value"] - half, m["value"] + half) / m["value"]
        if edit and "matmul" in edit and m["name"] == "matmul_bf16":
            factor *= 0.8
        m["value"] = m["value"] * factor
        stats.update(median=stats["median"] * factor, min=stats["min"] * factor, max=stats["max"] * factor)
        if isinstance(m.get("extra", {}).get("step_ms"), (int, float)):
            m["extra"]["step_ms"] = m["extra"]["step_ms"] / factor
    return out


def _port_down(ibstat: str, ca: str, port: int) -> str:
    """Mark one port of one HCA down, as ibstat prints a port with its cable pulled."""
    head, sep, rest = ibstat.partition(f"CA '{ca}'")
    block_start = rest.index(f"Port {port}:")
    block_end = rest.find("\tPort ", block_start + 1)
    block_end = len(rest) if block_end < 0 else block_end
    block = rest[block_start:block_end]
    block = block.replace("State: Active", "State: Down").replace(
        "Physical state: LinkUp", "Physical state: Disabled"
    )
    return head + sep + rest[:block_start] + block + rest[block_end:]
