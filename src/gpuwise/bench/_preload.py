"""Imported once by the forkserver so each benchmark process starts without re-importing torch.

The forkserver never initializes CUDA, so the processes forked from it may (CUDA forbids fork after init).
"""

import contextlib

import gpuwise.bench.models  # noqa: F401
import gpuwise.bench.runner  # noqa: F401

with contextlib.suppress(ImportError):  # the parent reports a missing torch; the preload must not die on it
    import torch  # noqa: F401
