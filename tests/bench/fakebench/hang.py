"""Fake benchmark: hang."""

from tests.bench.fakebench.behaviours import hang as run  # noqa: F401
from tests.bench.fakebench.behaviours import make_spec  # noqa: F401
