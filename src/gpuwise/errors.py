"""The exception tree. Every error a user can cause ends its message with "To fix: ...".

GpuwiseError                 base; cli.py maps it to a clean message and exit code 3
├── UserInputError           a file or argument the user gave is wrong (YAML, CSV, capture path)
│   ├── CaptureFormatError   a capture directory/tarball that is not in gpuwise-capture/1 format
│   └── DataValidationError  a row or field in a data file (catalog CSV, workload YAML) is invalid
├── MissingDependencyError   an optional package or system tool is not installed (torch, fio)
└── EnvironmentProblem       the machine cannot do what was asked (no GPU for a GPU-only step)
"""

from __future__ import annotations


class GpuwiseError(Exception):
    """Base class. `str(err)` is a complete message for the user."""

    exit_code = 3

    def __init__(self, message: str, fix: str | None = None):
        self.message = message
        self.fix = fix
        super().__init__(self.__str__())

    def __str__(self) -> str:
        return f"{self.message}\nTo fix: {self.fix}" if self.fix else self.message


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
        self.path, self.line = path, line
        super().__init__(where + message, fix)


class MissingDependencyError(GpuwiseError):
    """An optional Python package or system tool is missing."""


class EnvironmentProblem(GpuwiseError):
    """The machine cannot do what was asked."""
