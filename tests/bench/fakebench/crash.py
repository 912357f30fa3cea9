"""Fake benchmark: crash."""

from tests.bench.fakebench.behaviours import crash as run  # noqa: F401
from tests.bench.fakebench.behaviours import make_spec  # noqa: F401
