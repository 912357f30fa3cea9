"""How a GPU's bf16 matmul rate moves from a short burst to a sustained run, with the clocks.

`gpuwise bench` reports a sustained rate (it warms up for a minimum time before timing). A short
burst after an idle GPU can run faster, before the power limit pulls the clock down. This script
times the same matmul in consecutive 0.25 s windows for `--seconds`, while `nvidia-smi -lms 250`
logs the SM clock, power draw and active clock-event reasons beside it, so the two kinds of
number can be told apart. It also times `torch.mm(a, b, out=c)` against `a @ b` once each.

    python benchmarks/matmul_sustained.py [--n 8192] [--seconds 8]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--seconds", type=float, default=8.0)
    args = ap.parse_args()
    import torch

    n = args.n
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    flops = 2.0 * n**3

    def window(fn, calls: int) -> float:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        return flops * calls / (start.elapsed_time(end) / 1e3) / 1e12

    # burst: KINDS-style, 3 warm-ups then the mean of 10, straight from idle
    time.sleep(2.0)
    for _ in range(3):
        torch.mm(a, b, out=c)
    torch.cuda.synchronize()
    print(f"burst (3 warm-up, 10 timed, from idle): {window(lambda: torch.mm(a, b, out=c), 10):.1f} TFLOP/s")
    per_window = max(1, int(0.25 / (flops / 700e12)))
    smi = subprocess.Popen(
        [
            "nvidia-smi",
            "-i",
            "0",
            "--query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active",
            "--format=csv,noheader",
            "-lms",
            "250",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    rows, t0 = [], time.perf_counter()
    while time.perf_counter() - t0 < args.seconds:
        rows.append((time.perf_counter() - t0, window(lambda: torch.mm(a, b, out=c), per_window)))
    smi.terminate()
    log = smi.communicate()[0]
    for t, rate in rows:
        print(f"t={t:5.2f}s {rate:7.1f} TFLOP/s")
    print("nvidia-smi during the run (time, SM clock, power, active clock-event reason mask):")
    print(log)
    steady = [r[1] for r in rows[len(rows) // 2 :]]
    print(f"sustained (second half of {args.seconds:g} s): median {statistics.median(steady):.1f} TFLOP/s")
    print(
        f"a @ b (allocating) once: {window(lambda: a @ b, per_window):.1f} TFLOP/s; mm(out=c) once: "
        f"{window(lambda: torch.mm(a, b, out=c), per_window):.1f} TFLOP/s"
    )


if __name__ == "__main__":
    main()
