"""One fake benchmark per misbehaviour; the runner loads them by module path like real ones."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass

from gpuwise.bench.context import MissingTool, Skip
from gpuwise.documents.bench import Measurement
from gpuwise.i18n import msg


@dataclass(frozen=True)
class Spec:
    pass


def make_spec(ctx):
    return Spec()


def ok(ctx, spec):
    ctx.say("working")
    return [
        Measurement(name="fake_ok", layer="fake", value=50.0, unit="GB/s", peak=100.0, peak_source="test")
    ]


def above_peak(ctx, spec):
    return [
        Measurement(name="fake_above", layer="fake", value=120.0, unit="GB/s", peak=100.0, peak_source="test")
    ]


def crash(ctx, spec):
    os.kill(os.getpid(), signal.SIGSEGV)


def hang(ctx, spec):
    # a child of its own that also hangs: the timeout must take it down too. Pids go to data_dir for the test.
    child = os.fork()
    if child == 0:
        time.sleep(3600)
        os._exit(0)
    with open(os.path.join(ctx.options.data_dir, "pids"), "w") as fh:
        fh.write(f"{os.getpid()} {child}")
    time.sleep(3600)


def raises(ctx, spec):
    raise RuntimeError("CUDA out of memory. Tried to allocate 80.00 GiB")


def skips(ctx, spec):
    raise Skip("no CUDA GPU: this needs one")


def needs_a_tool(ctx, spec):
    raise MissingTool("gw-tool", "gw-tool is not installed.", "apt-get install gw-tool")


def skips_with_a_message(ctx, spec):
    raise Skip(msg("error: {message}", message="x"))  # an existing message of the catalog


def litter(ctx, spec):
    """Writes where benchmarks write (the temp dir, a child process's file), then dies without clean-up."""
    import subprocess
    import tempfile

    with open(os.path.join(tempfile.gettempdir(), "gpuwise-fio.dat"), "wb") as fh:
        fh.write(b"\0" * 65536)
    subprocess.Popen(["sh", "-c", 'echo x > "$TMPDIR/child.txt"; sleep 3600'])
    time.sleep(0.5)
    with open(os.path.join(ctx.options.data_dir, "scratch"), "w") as fh:
        fh.write(tempfile.gettempdir())
    with open(os.path.join(ctx.options.data_dir, "pgid"), "w") as fh:  # the group its children are in
        fh.write(str(os.getpgid(0)))
    os.kill(os.getpid(), signal.SIGKILL)


def cleans_up(ctx, spec):
    """Hangs, but has clean-up in `finally`: the runner's SIGTERM (before any SIGKILL) must let it run."""
    try:
        time.sleep(3600)
    finally:
        with open(os.path.join(ctx.options.data_dir, "cleaned"), "w") as fh:
            fh.write("yes")
