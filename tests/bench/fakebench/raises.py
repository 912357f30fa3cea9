"""Fake benchmark: raises."""

from tests.bench.fakebench.behaviours import make_spec  # noqa: F401
from tests.bench.fakebench.behaviours import raises as run  # noqa: F401
