"""Fake benchmark: skips."""

from tests.bench.fakebench.behaviours import make_spec  # noqa: F401
from tests.bench.fakebench.behaviours import skips as run  # noqa: F401
