"""Imported once by tune's forkserver, so each trial forks from an interpreter that has torch imported.

Like bench's (gpuwise/bench/_preload.py): the forkserver never initializes CUDA, so the trials forked
from it may. Environment read only at import (OMP_NUM_THREADS by the OpenMP runtime) is the one the
forkserver started with; a trial's own variables (NCCL_*, TORCHINDUCTOR_CACHE_DIR) are read later, at
use, and are set in the trial before it runs (torch._dynamo's import starts no thread and no CUDA).
"""

import contextlib
import signal

# Ctrl-C goes to the whole foreground group; tune kills its trials itself, so the server ignores it
signal.signal(signal.SIGINT, signal.SIG_IGN)

import gpuwise.tune.worker  # noqa: F401, E402

with contextlib.suppress(ImportError):  # tune reports a missing torch itself; the preload must not die on it
    import torch  # noqa: F401
    import torch._dynamo  # noqa: F401  (a second of import: torch.optim's constructors pull it in)
    import torch.nn  # noqa: F401
    import torch.optim  # noqa: F401
    import torch.utils.data  # noqa: F401

    import gpuwise.workloads.loop  # noqa: F401
    import gpuwise.workloads.reference  # noqa: F401
    import gpuwise.workloads.spec  # noqa: F401
