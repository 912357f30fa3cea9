"""gpuwise.interrupts: a stop signal raises once, is held by deferred(), is ignored after commit(), and
never leaves SIGINT/SIGTERM ignored for the programs started afterwards.

Signals are raised with signal.raise_signal, which runs the handler in this thread before it returns:
no waiting. tests/conftest.py puts pytest's own handlers back after each test."""

from __future__ import annotations

import signal
import subprocess

import pytest

from gpuwise import interrupts
from gpuwise.errors import Terminated


def _killed_by_its_own(sig: signal.Signals) -> bool:
    """Does a program started now die of `sig` sent to itself? (An ignored signal would let it exit 0.)"""
    done = subprocess.run(["bash", "-c", f"kill -{sig.name[3:]} $$; exit 0"], timeout=120)
    return done.returncode == -sig


def test_a_signal_raises_once_and_a_second_one_during_the_clean_up_is_ignored():
    interrupts.install()
    with pytest.raises(Terminated):
        signal.raise_signal(signal.SIGTERM)
    signal.raise_signal(signal.SIGINT)  # clean-up under way: nothing raised
    assert interrupts.received() == signal.SIGTERM


def test_a_signal_inside_deferred_is_raised_when_the_step_ends():
    interrupts.install()
    with pytest.raises(KeyboardInterrupt), interrupts.deferred():
        signal.raise_signal(signal.SIGINT)
        assert interrupts.received() == signal.SIGINT  # held: the step may undo itself


def test_after_commit_the_cli_ignores_a_signal_even_while_python_shuts_down():
    interrupts.install()
    interrupts.commit()
    try:
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN == signal.getsignal(signal.SIGINT)
        signal.raise_signal(signal.SIGTERM)
        assert interrupts.received() is None  # the result stands
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)


def test_commit_without_install_leaves_the_callers_signals_and_its_children_obey_them():
    # the old commit() always set SIG_IGN, which exec passes on: the torchrun stand-in of tests/launch
    # could not be stopped by pkill after the capture tests had run in the same process
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    interrupts.commit()
    assert {sig: signal.getsignal(sig) for sig in before} == before
    assert _killed_by_its_own(signal.SIGTERM) and _killed_by_its_own(signal.SIGINT)


def test_an_in_process_capture_leaves_the_stop_signals_as_they_were(tmp_path):
    from gpuwise.capture.writer import write_capture

    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    write_capture(tmp_path / "node")
    assert {sig: signal.getsignal(sig) for sig in before} == before
    assert _killed_by_its_own(signal.SIGTERM)
