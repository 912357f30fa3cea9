"""Trials forked from a preloaded interpreter: a forkserver that imported torch once (tune/_preload.py),
as bench's runner does, so a trial's fixed start-up is a fork, not a Python start and a torch import.

A forked trial behaves like the `python -m gpuwise.tune.worker` process it replaces: its own session
(process group), so the whole group can be killed; its output in the trial folder; its progress lines
over a pipe; an exit code like Popen's (negative: killed by that signal).
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import types

PRELOAD = ["gpuwise.tune._preload"]
_state = {"atexit": False}


def context():
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


def start() -> None:
    """Start the forkserver now, so its torch import overlaps the parent's own; stopped at exit (by
    bench's stop_workers, which stops whichever forkserver this process started)."""
    from multiprocessing import forkserver

    from gpuwise.bench.runner import stop_workers

    context()
    forkserver.ensure_running()
    if not _state["atexit"]:
        atexit.register(stop_workers)
        _state["atexit"] = True


@contextlib.contextmanager
def _without_main():
    """multiprocessing re-imports the parent's __main__ in each child it starts this way (for the CLI:
    gpuwise.cli, Typer and Rich, about a second here); a trial needs nothing from it, so the child is
    told of a bare one."""
    real = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = real


class Forked:
    """One trial rank forked from the server, with the part of Popen's interface trial.py uses."""

    def __init__(self, config_path: str, env: dict[str, str], output_path: str):
        from gpuwise.tune.worker import forked_main

        ctx = context()
        self.conn, child = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(target=forked_main, args=(config_path, env, child, output_path))
        with _without_main():
            self._proc.start()
        child.close()  # the rank holds the only write end: EOF when it (and what it started) exits
        self.pid = self._proc.pid

    @property
    def returncode(self) -> int | None:
        return self._proc.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._proc.join(timeout)
        if self._proc.exitcode is None:
            raise subprocess.TimeoutExpired("gpuwise tune trial", timeout or 0)
        return self._proc.exitcode

    def kill(self) -> None:
        """SIGKILL the rank itself (its group may not exist yet if it was killed before setsid)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.pid, signal.SIGKILL)

    def close(self) -> None:
        self.conn.close()


def read_lines(conn, put) -> None:
    """The parent's reader: each progress line the rank sent, then None at EOF."""
    while True:
        try:
            put(conn.recv_bytes().decode("utf-8", "replace"))
        except (EOFError, OSError):
            break
    put(None)
