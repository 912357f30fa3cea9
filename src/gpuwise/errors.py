"""The exception tree. Every error a user can cause ends its message with "To fix: ...".

GpuwiseError                 base; cli.py maps it to a clean message and exit code 3
├── UserInputError           a file or argument the user gave is wrong (YAML, CSV, capture path)
│   ├── CaptureFormatError   a capture directory/tarball that is not in gpuwise-capture/1 format
│   └── DataValidationError  a row or field in a data file (catalog CSV, workload YAML) is invalid
├── MissingDependencyError   an optional package or system tool is not installed (torch, fio)
└── EnvironmentProblem       the machine cannot do what was asked (no GPU for a GPU-only step)
"""

from __future__ import annotations

from gpuwise.i18n import msg

# The exit codes of every command (cli.py maps errors to them; --debug adds a traceback, same code).
EXIT_OK = 0
EXIT_WARNINGS = 1  # doctor: warnings found
EXIT_CRITICAL = 2  # doctor: critical findings
EXIT_COULD_NOT_RUN = 3  # bad input, missing tool, output exists, a concurrent writer won: see 'To fix'
EXIT_BENCH_FAILED = 4  # bench: a benchmark failed (crash, timeout, error) and --keep-going was not given
EXIT_SKIPPED = 5  # bench: nothing failed, but a benchmark was skipped because a tool it needs is missing
EXIT_INTERRUPTED = 130  # Ctrl-C / SIGINT: temporary files removed, nothing published
EXIT_TERMINATED = 143  # SIGTERM: the same clean-up as SIGINT
EXIT_PIPE_CLOSED = 141  # stdout was closed by the reader (`gpuwise ... | head`)
EXIT_CODES = {
    EXIT_OK: "ok",
    EXIT_WARNINGS: "warnings (doctor)",
    EXIT_CRITICAL: "critical findings (doctor)",
    EXIT_COULD_NOT_RUN: "could not run; the message ends with 'To fix: ...'",
    EXIT_BENCH_FAILED: "a benchmark failed (bench without --keep-going)",
    EXIT_SKIPPED: "some benchmarks skipped: a tool is missing (bench; the message says what to install)",
    EXIT_INTERRUPTED: "interrupted (SIGINT, Ctrl-C); nothing half-written is left",
    EXIT_TERMINATED: "terminated (SIGTERM); nothing half-written is left",
    EXIT_PIPE_CLOSED: "stdout closed by the reader",
}


class GpuwiseError(Exception):
    """Base class. `str(err)` is a complete message for the user."""

    exit_code = 3

    def __init__(self, message: str, fix: str | None = None):
        self.message = message
        self.fix = fix
        super().__init__(self.__str__())

    def text(self) -> str:
        """The message and its fix, as one message (an i18n.Msg when they are: the CLI words it)."""
        return self.message + "\n" + msg("To fix: {fix}", fix=self.fix) if self.fix else self.message

    def __str__(self) -> str:
        return self.text()


class UserInputError(GpuwiseError):
    """Something the user passed in is wrong."""


class CaptureFormatError(UserInputError):
    """A capture that is not in the gpuwise-capture/1 format."""


class DataValidationError(UserInputError):
    """An invalid row or field in a data file. Carries file:line when known."""

    def __init__(
        self, message: str, fix: str | None = None, path: str | None = None, line: int | None = None
    ):
        where = f"{path}:{line}: " if path and line else (f"{path}: " if path else "")
        self.path, self.line, self.reason = path, line, message  # reason: the message without file:line
        super().__init__(where + message, fix)


class MissingDependencyError(GpuwiseError):
    """An optional Python package or system tool is missing."""


class EnvironmentProblem(GpuwiseError):
    """The machine cannot do what was asked."""


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when SIGTERM arrives, so `finally` clean-ups run as on Ctrl-C."""
