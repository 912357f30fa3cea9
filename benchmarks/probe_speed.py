"""Time `gpuwise probe --json` against `python -m torch.utils.collect_env` on this machine, in one run.

Goal (issue 2): probe --json under 1.5 s wall time including Python start-up, and faster than
collect_env (which collects far fewer facts). Both are timed as whole processes, alternating, and
the medians are compared, so machine noise hits both alike.

    python benchmarks/probe_speed.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time


def time_cmd(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    gpuwise = shutil.which("gpuwise") or sys.exit("gpuwise is not on PATH: pip install -e . first")
    probe = [gpuwise, "probe", "--json"]
    collect_env = [sys.executable, "-m", "torch.utils.collect_env"]
    have_torch = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0
    time_cmd(probe)  # warm the page cache for both
    if have_torch:
        time_cmd(collect_env)
    p_times, c_times = [], []
    for _ in range(args.repeats):
        p_times.append(time_cmd(probe))
        if have_torch:
            c_times.append(time_cmd(collect_env))
    p = statistics.median(p_times)
    print(
        f"gpuwise probe --json        median {p:.3f} s  (min {min(p_times):.3f}, max {max(p_times):.3f}, n={len(p_times)})"
    )
    print(f"  goal < 1.5 s: {'PASS' if p < 1.5 else 'FAIL'}")
    if c_times:
        c = statistics.median(c_times)
        print(
            f"torch.utils.collect_env     median {c:.3f} s  (min {min(c_times):.3f}, max {max(c_times):.3f}, n={len(c_times)})"
        )
        print(
            f"  ratio probe/collect_env = {p / c:.2f} ({'PASS' if p < c else 'FAIL'}: probe must be faster)"
        )
    else:
        print("torch not installed: collect_env comparison skipped")


if __name__ == "__main__":
    main()
