"""Fake benchmark: ok."""

from tests.bench.fakebench.behaviours import make_spec  # noqa: F401
from tests.bench.fakebench.behaviours import ok as run  # noqa: F401
