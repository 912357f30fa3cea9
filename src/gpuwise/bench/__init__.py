"""Benchmarks: the only code that runs workloads. Each returns Measurements (documents/bench.py).

`gpuwise.bench.runner.run_benchmarks` runs the registered benchmarks (bench/registry.py), each in its
own process with a timeout, and returns a BenchReport. torch is an optional extra: `require_torch()`
turns its absence into a message that says how to install it.
"""

from __future__ import annotations

from gpuwise.i18n import msg


def require_torch():
    """Import torch or raise MissingDependencyError with the install command.

    Ctrl-C/SIGTERM during the import is held until it ends: interrupted inside torch's C++ start-up,
    the process aborts (SIGABRT) and skips every clean-up.
    """
    from gpuwise import interrupts

    try:
        with interrupts.deferred():
            import torch
    except ImportError as exc:
        from gpuwise.errors import MissingDependencyError

        raise MissingDependencyError(
            msg("`gpuwise bench` needs PyTorch, which is not installed ({exc}).").format(exc=exc),
            fix=msg(
                "pip install 'gpuwise[bench]'  (on a GPU machine, first install the torch build matching "
                "your CUDA driver from https://pytorch.org)"
            ),
        ) from exc
    return torch
