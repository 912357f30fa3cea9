"""How `gpuwise fleet report` scales: analyse 1,000 node results in <= 30 s and <= 1 GB (issue 14).

Builds a fleet directory the way `fleet run` leaves one (DIR/<node>/capture.tar.gz + bench.json)
from real recordings: the H200 VM capture and bench result in tests/captures plus a real `ibstat`
(see tests/fleet/fleet_kit.py for the sources and the per-node variation), with varied edits on
about 1% of the nodes each (PCIe x8, older driver, slow matmul, InfiniBand port down). Then it times
the analysis (reading every capture, doctor rules per node, drift, outliers, verdict) in a fresh
process and reports its wall time, CPU time (all processes) and peak resident memory (the largest
single process: the parent or one worker). The machine's load average is printed first, because on
a shared VM the wall time mostly measures the neighbours. Run with N = 500, 1000, 2000 to see the growth
(issue 25: memory per node, now a small summary per node, fleet/summary.py).

    python benchmarks/fleet_report_scale.py                 # 1000 nodes
    python benchmarks/fleet_report_scale.py --nodes 250 500 1000
    python benchmarks/fleet_report_scale.py --keep /tmp/fleets   # build once, measure again later
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

EDIT_KINDS = ("GPU 0 PCIe x8", "older driver 570.172.08", "slow matmul_bf16", "InfiniBand port mlx4_1/2 down")


def build(root: Path, count: int, seed: int = 14) -> dict[str, str]:
    from tests.conftest import REAL
    from tests.fleet.fleet_kit import BASE_BENCH, BASE_CAPTURE, IBSTAT, write_node

    from gpuwise.capture.writer import write_tarball

    ibstat = (REAL / IBSTAT).read_text()
    bench = json.loads(BASE_BENCH.read_text())
    rng = random.Random(seed)
    edits = {}
    with tempfile.TemporaryDirectory(prefix="gwfl-scale-") as scratch:
        for i in range(1, count + 1):
            name = f"node{i:04d}"
            roll = rng.random()
            edit = EDIT_KINDS[int(roll * 100)] if roll < 0.04 else None
            if edit:
                edits[name] = edit
            cap = Path(scratch) / name
            shutil.copytree(BASE_CAPTURE, cap)
            node = root / name
            node.mkdir(parents=True)
            # write_node puts bench.json beside the capture folder; the folder is then packed as a tarball
            write_node(cap, name, ibstat, bench, seed=i, edit=edit)
            shutil.move(str(Path(scratch) / "bench.json"), node / "bench.json")
            write_tarball(
                cap, node / "capture.tar.gz", "capture"
            )  # as `gpuwise capture -o X.tar.gz` packs it
            shutil.rmtree(cap)
    return edits


CHILD = """
import json, resource, sys, time
t = time.perf_counter()
from gpuwise.fleet.analyze import analyze_fleet
r = analyze_fleet(sys.argv[1])
s = time.perf_counter() - t
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"seconds": s, "cpu_seconds": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime,
                  "max_rss_mb": max(me.ru_maxrss, kids.ru_maxrss) / 1024,
                  "odd": r.odd_nodes(), "nodes": len(r.nodes)}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, nargs="+", default=[1000])
    ap.add_argument(
        "--keep", type=Path, help="build the fleets under this folder and reuse them on later runs"
    )
    args = ap.parse_args()
    print(f"{os.cpu_count()} CPUs, load average before: {os.getloadavg()[0]:.1f}")
    print(f"{'nodes':>6} {'seconds':>8} {'CPU s':>8} {'CPU ms/node':>12} {'peak RSS MB':>12}  named = edited")
    for n in args.nodes:
        with tempfile.TemporaryDirectory(prefix="gwfl-scale-") as tmp:
            root = (args.keep / f"fleet-{n}") if args.keep else Path(tmp) / "fleet"
            edits_file = root / "_edits.json"
            if not edits_file.exists():
                shutil.rmtree(root, ignore_errors=True)
                edits_file.parent.mkdir(parents=True)
                edits_file.write_text(json.dumps(build(root, n)))
            edits = json.loads(edits_file.read_text())
            p = subprocess.run(
                [sys.executable, "-c", CHILD, str(root)], capture_output=True, text=True, check=True
            )
            r = json.loads(p.stdout)
            ok = r["odd"] == sorted(edits)
            print(
                f"{n:>6} {r['seconds']:>8.2f} {r['cpu_seconds']:>8.2f} {r['cpu_seconds'] / n * 1000:>12.1f} "
                f"{r['max_rss_mb']:>12.0f}  {ok} ({len(edits)} edited)",
                flush=True,
            )


if __name__ == "__main__":
    main()
