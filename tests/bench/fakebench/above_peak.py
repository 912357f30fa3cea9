"""Fake benchmark: above_peak."""

from tests.bench.fakebench.behaviours import above_peak as run  # noqa: F401
from tests.bench.fakebench.behaviours import make_spec  # noqa: F401
