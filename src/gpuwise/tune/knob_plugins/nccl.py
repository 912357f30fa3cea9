"""NCCL environment variables (socket threads, sockets per thread, buffer size): only between GPU ranks."""

from __future__ import annotations

from gpuwise.i18n import msg
from gpuwise.tune.knob_plugins import KnobCode


def _gpu_ranks(value, m) -> str | None:
    if m.device != "cuda" or m.world_size < 2:
        return msg("NCCL runs only between GPU ranks (this run uses gloo or one process)")
    return None


NCCL_SOCKET_NTHREADS = KnobCode(name="NCCL_SOCKET_NTHREADS", skip=_gpu_ranks, check_baseline=True, env=True)
NCCL_NSOCKS_PERTHREAD = KnobCode(name="NCCL_NSOCKS_PERTHREAD", skip=_gpu_ranks, check_baseline=True, env=True)
NCCL_BUFFSIZE = KnobCode(name="NCCL_BUFFSIZE", skip=_gpu_ranks, check_baseline=True, env=True)
