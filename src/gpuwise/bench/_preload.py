"""Imported once by the forkserver so each benchmark process starts without re-importing torch.

The forkserver never initializes CUDA, so the processes forked from it may (CUDA forbids fork after init).
"""

import contextlib
import signal

# Ctrl-C goes to the whole foreground group; the parent handles it and kills benchmark groups itself,
# so this server ignores it rather than print a KeyboardInterrupt traceback mid-import.
signal.signal(signal.SIGINT, signal.SIG_IGN)

import gpuwise.bench.runner  # noqa: F401, E402
import gpuwise.documents.bench  # noqa: F401, E402
import gpuwise.facts.models  # noqa: F401, E402  (the context carries the probe's CPU and mount facts)

with contextlib.suppress(ImportError):  # the parent reports a missing torch; the preload must not die on it
    import torch  # noqa: F401
