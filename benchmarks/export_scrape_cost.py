"""What does a scrape of `gpuwise export` cost? Collector CPU per scrape for 8 GPUs, and idle CPU at 15 s.

Goal (issue 13): <= 20 ms of CPU per scrape of 8 GPUs in the collector, <= 1% of one core idle at a
15 s scrape interval. Compared side by side with nvidia_gpu_exporter's approach, shelling out to
`nvidia-smi --query-gpu=... --format=csv` on every scrape.

Without a GPU, every figure here comes from replay:
- "8 GPUs" are the H200 capture's one GPU repeated 8 times (each with two processes), replayed;
- the nvidia-smi side runs a FAKE nvidia-smi: a shell script that `cat`s a recorded 212-field
  --query-gpu CSV (the H100 "load" recording from nvidia_gpu_exporter, repeated for 8 GPUs), then
  parses it. That is only the fork/exec + parse floor: a real nvidia-smi also initialises NVML on
  every call (the H200 capture's meta.json records 0.13 s wall for plain `nvidia-smi` there).
With a GPU (`--live`), the collector reads NVML through gpuwise.capture.nvml.Sampler instead.

    python benchmarks/export_scrape_cost.py                  # replay, ~1 min (idle phase 60 s)
    python benchmarks/export_scrape_cost.py --idle-seconds 0 # skip the idle phase
    python benchmarks/export_scrape_cost.py --live           # on a GPU machine
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil
from prometheus_client import CollectorRegistry

from gpuwise.export.collector import GpuCollector
from gpuwise.export.exposition import render
from gpuwise.export.replay_csv import snapshots_from_query_csv
from gpuwise.export.sample import ProcessSample, Snapshot
from gpuwise.export.sources import LiveSource, ReplaySource, load_frames

ROOT = Path(__file__).resolve().parents[1]
H200 = ROOT / "tests" / "captures" / "h200-1gpu-kvm-vm"
REAL = Path(os.environ.get("GPUWISE_REAL_FIXTURES", ROOT.parent / "shared" / "fixtures" / "real"))
H100_CAPTURE = (
    REAL / "nvidia_smi_captures" / "nvidia_gpu_exporter_linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt"
)


def eight_gpu_frame() -> Snapshot:
    (frame,) = load_frames(H200)
    gpus = []
    for i in range(8):
        g = copy.deepcopy(frame.gpus[0])
        g.index, g.uuid = i, f"GPU-00000000-0000-4000-8000-00000000000{i}"
        g.processes = [ProcessSample(pid=1000 + 2 * i + k, used_mib=4096.0, name="python") for k in range(2)]
        gpus.append(g)
    frame.gpus = gpus
    return frame


def cpu_ms_per_call(fn, n: int) -> list[float]:
    """Process CPU (this process and waited-for children) per call, in ms."""
    out = []
    for _ in range(n):
        c0 = time.process_time() + _children_cpu()
        fn()
        out.append((time.process_time() + _children_cpu() - c0) * 1e3)
    return out


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def in_process(live: bool, n: int) -> list[float]:
    source = LiveSource() if live else ReplaySource([eight_gpu_frame()], "8 GPUs replayed")
    registry = CollectorRegistry()
    registry.register(GpuCollector(source))
    render(registry)  # warm-up (imports, first-time caches)
    return cpu_ms_per_call(lambda: render(registry), n)


def served(live: bool, n: int, idle_s: float) -> tuple[list[float], float | None]:
    """CPU the exporter process spends per HTTP scrape, and its idle CPU share over idle_s at 15 s scrapes."""
    with tempfile.TemporaryDirectory(prefix="gwexport-bench-") as tmp:
        args = [sys.executable, "-m", "gpuwise.cli", "export", "--listen", "127.0.0.1:0"]
        if not live:
            rec = Path(tmp) / "eight.jsonl"
            rec.write_text(
                json.dumps({"format": "gpuwise-watch/1"})
                + "\n"
                + json.dumps(eight_gpu_frame().to_dict())
                + "\n"
            )
            args += ["--from", str(rec)]
        proc = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
        try:
            url = re.search(r"(http://\S+/metrics)", proc.stderr.readline()).group(1)
            ps = psutil.Process(proc.pid)

            def cpu() -> float:
                t = ps.cpu_times()
                return t.user + t.system

            urllib.request.urlopen(url).read()  # warm-up
            # the kernel counts process CPU in 10 ms ticks: time n scrapes together, report the mean
            c0 = cpu()
            for _ in range(n):
                urllib.request.urlopen(url).read()
            per = [(cpu() - c0) * 1e3 / n]
            idle = None
            if idle_s > 0:
                c0, t0 = cpu(), time.monotonic()
                while time.monotonic() - t0 < idle_s:
                    urllib.request.urlopen(url).read()
                    time.sleep(min(15.0, max(0.0, idle_s - (time.monotonic() - t0))))
                idle = 100 * (cpu() - c0) / (time.monotonic() - t0)
            return per, idle
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def shell_out(n: int) -> list[float] | None:
    """The nvidia_gpu_exporter way, with a FAKE nvidia-smi that prints a recorded 8-GPU CSV."""
    if not H100_CAPTURE.exists():
        return None
    parts = re.split(r"^#{80}\n", H100_CAPTURE.read_text(), flags=re.M)
    body = next(parts[i + 1] for i, p in enumerate(parts) if p.startswith("# load :: query-gpu"))
    header, row = body.strip().splitlines()[:2]
    names = [h.strip() for h in header.split(",")]
    cells = [c.strip() for c in row.split(",")]
    at = names.index("index")
    rows = [", ".join(cells[:at] + [str(i)] + cells[at + 1 :]) for i in range(8)]
    with tempfile.TemporaryDirectory(prefix="gwexport-bench-") as tmp:
        csv_path, fake = Path(tmp) / "query.csv", Path(tmp) / "nvidia-smi"
        csv_path.write_text(header + "\n" + "\n".join(rows) + "\n")
        fake.write_text(
            f"#!/bin/sh\n# FAKE nvidia-smi for the benchmark: prints a recorded CSV\ncat {csv_path}\n"
        )
        fake.chmod(0o755)
        query = "--query-gpu=" + ",".join(h.split(" [")[0].strip() for h in header.split(","))

        def scrape() -> None:
            out = subprocess.run(
                [str(fake), query, "--format=csv"], capture_output=True, text=True, check=True
            ).stdout
            (frame,) = snapshots_from_query_csv(out, hostname="h", taken_at=0.0)
            assert len(frame.gpus) == 8

        scrape()
        return cpu_ms_per_call(scrape, n)


def describe(name: str, ms: list[float] | None) -> dict:
    if not ms:
        return {"name": name, "skipped": True}
    if len(ms) == 1:
        return {"name": name, "mean_ms": ms[0]}
    q = statistics.quantiles(ms, n=10)
    return {
        "name": name,
        "n": len(ms),
        "median_ms": statistics.median(ms),
        "p90_ms": q[-1],
        "max_ms": max(ms),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--live", action="store_true", help="read this machine's GPUs through NVML")
    parser.add_argument("--scrapes", type=int, default=200)
    parser.add_argument("--idle-seconds", type=float, default=60.0)
    args = parser.parse_args()
    what = "live NVML" if args.live else "replay, 8 GPUs"
    per_http, idle = served(args.live, args.scrapes, args.idle_seconds)
    results = [
        describe(f"collector in-process ({what})", in_process(args.live, args.scrapes)),
        describe(f"gpuwise export over HTTP, exporter process CPU ({what})", per_http),
        describe(
            "shell out to a FAKE nvidia-smi (cat of a recorded 8-GPU CSV) + parse", shell_out(args.scrapes)
        ),
    ]
    for r in results:
        if r.get("skipped"):
            print(f"{r['name']}: skipped (recording not found)")
        elif "mean_ms" in r:
            print(f"{r['name']}: mean {r['mean_ms']:.2f} ms CPU per scrape over {args.scrapes} scrapes")
        else:
            print(
                f"{r['name']}: median {r['median_ms']:.2f} ms, p90 {r['p90_ms']:.2f} ms, max {r['max_ms']:.2f} ms CPU per scrape (n={r['n']})"
            )
    if idle is not None:
        print(f"exporter idle at one scrape per 15 s over {args.idle_seconds:g} s: {idle:.3f}% of one core")
    print(
        json.dumps(
            {"results": results, "idle_pct_of_core": idle, "cpus": os.cpu_count(), "load": os.getloadavg()}
        )
    )


if __name__ == "__main__":
    main()
