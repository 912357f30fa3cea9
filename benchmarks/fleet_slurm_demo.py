"""The README's fleet example, reproduced: a real Slurm cluster on this machine (root), three runs.

Starts the test cluster of tests/fleet/slurm_cluster.py (munged, slurmctld, three slurmd in network
namespaces), then: `fleet run --slurm -N 2` (capture + memory benchmarks + gloo all-reduce + link
test), `fleet run --slurm -N 3` with a 20 Mbit/s tbf limit on the traffic into gwfl3, and
`fleet healthcheck --expect gpus=8,ib=4 --drain` on gwfl2 followed by `sinfo -R`. Tears it all down.

    sudo PYTHONPATH=. .venv/bin/python benchmarks/fleet_slurm_demo.py
"""

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.fleet.slurm_cluster import SlurmCluster

c = SlurmCluster(3)
out = Path(tempfile.mkdtemp(prefix="gwfl-demo-"))
G = str(Path(sys.executable).parent / "gpuwise")


def sh(*a, **kw):
    t = time.time()
    p = subprocess.run(a, capture_output=True, text=True, env=dict(c.env, COLUMNS="100"), **kw)
    print(f"$ {' '.join(a)}   # {time.time() - t:.1f} s, exit {p.returncode}")
    print(p.stdout)
    print(p.stderr[-3000:], file=sys.stderr)


try:
    c.up()
    sh("sinfo")
    sh(
        G,
        "fleet",
        "run",
        "--slurm",
        "-N",
        "2",
        "--time",
        "10",
        "--out",
        str(out / "two"),
        "--bench-only",
        "memory",
        "--collective-sizes",
        "64K:4M",
        "--link-bytes",
        "4M",
    )
    c.limit_link("gwfl3", "20mbit")
    try:
        sh(
            G,
            "fleet",
            "run",
            "--slurm",
            "-N",
            "3",
            "--time",
            "10",
            "--out",
            str(out / "three"),
            "--bench-only",
            "none",
            "--collective-sizes",
            "64K",
            "--link-bytes",
            "1M",
        )
    finally:
        c.unlimit_link("gwfl3")
    p = c.nsenter("gwfl2", G, "fleet", "healthcheck", "--expect", "gpus=8,ib=4", "--drain")
    print("$ gpuwise fleet healthcheck --expect gpus=8,ib=4 --drain   # on gwfl2, exit", p.returncode)
    print(p.stdout)
    sh("sinfo", "-R")
    c.resume("gwfl2")
finally:
    c.down()
    shutil.rmtree(out, ignore_errors=True)
