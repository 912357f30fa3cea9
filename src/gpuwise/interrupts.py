"""SIGINT and SIGTERM end any command the way Ctrl-C does: `finally` blocks run, temporaries go.

`install()` (called by cli.main) routes both signals to one handler that raises KeyboardInterrupt
(SIGINT) or errors.Terminated (SIGTERM) in the main thread, once: a second signal while clean-up runs is
ignored, so clean-up is never cut short. A step that must not be torn in two (publishing a finished
file) runs inside `deferred()`: a signal that arrives then is held and raised when the step ends, and
the step can ask `received()` to undo itself first. After `commit()` the command's result is published
and a late signal is ignored while the process finishes (exit 0, the result intact).

commit() sets SIG_IGN only where install()'s handler is in place (the CLI's own process, which is
ending: SIG_IGN holds through the interpreter's shutdown, when Python puts back the default
disposition that a late SIGTERM would die of). Anywhere else (gpuwise called in-process, as the tests
do) it leaves the caller's signals alone: an ignored signal stays ignored in every program started
afterwards (exec keeps it); the torchrun rendezvous test, run after the capture tests, waited for a
`pkill` that could not stop its stand-in.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

from gpuwise.errors import Terminated

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_state: dict = {"signal": None, "defer": 0, "committed": False}


def install() -> None:
    """Handle SIGINT and SIGTERM in this (main) thread from now on."""
    _state.update(signal=None, defer=0, committed=False)
    for sig in _SIGNALS:
        signal.signal(sig, _handler)


def _exception(signum: int) -> BaseException:
    return Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _handler(signum: int, _frame) -> None:
    if _state["committed"]:
        return  # the result is published: let the process finish
    if _state["signal"] is not None:
        return  # clean-up after the first signal is already under way: let it finish
    _state["signal"] = signum
    if _state["defer"]:
        return
    raise _exception(signum)


def received() -> int | None:
    """The signal number that asked this process to stop, if any."""
    return _state["signal"]


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold SIGINT/SIGTERM while the body runs; raise for a held one when it ends (unless committed)."""
    _state["defer"] += 1
    try:
        yield
    finally:
        _state["defer"] -= 1
        if not _state["defer"] and _state["signal"] is not None and not _state["committed"]:
            raise _exception(_state["signal"])


def commit() -> None:
    """The command's output is published: from now on SIGINT/SIGTERM are ignored while it finishes."""
    _state["committed"] = True
    for sig in _SIGNALS:
        if signal.getsignal(sig) is _handler:  # install()'s process, never an in-process caller's
            with contextlib.suppress(ValueError):  # only the main thread may set handlers
                signal.signal(sig, signal.SIG_IGN)
