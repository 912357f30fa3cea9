"""Specs for tests: a fast data-bound MLP, and specs that hang, run out of memory, or return garbage."""

from __future__ import annotations

import time

from gpuwise.workloads.reference import mlp_slow_data
from gpuwise.workloads.spec import SpecConfig


def fast_mlp(cfg: SpecConfig):
    """mlp-slow-data with a 1 ms read: the same shape, seconds instead of minutes."""
    return mlp_slow_data(cfg, read_latency_s=0.001)


def hang(cfg: SpecConfig):
    """Sleeps, with a child of its own; writes both pids to $GW_TU_PIDFILE (the test checks they die)."""
    import os
    import subprocess

    child = subprocess.Popen(["sleep", "3600"])
    if os.environ.get("GW_TU_PIDFILE"):
        with open(os.environ["GW_TU_PIDFILE"], "w") as fh:
            fh.write(f"{os.getpid()} {child.pid}\n")
    time.sleep(3600)


def oom(cfg: SpecConfig):
    raise RuntimeError("CUDA out of memory. Tried to allocate 20.00 GiB")


def not_a_spec(cfg: SpecConfig):
    return {"model": None}
