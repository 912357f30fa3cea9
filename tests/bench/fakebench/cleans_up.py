"""Fake benchmark: see behaviours.cleans_up."""

from tests.bench.fakebench.behaviours import cleans_up as run  # noqa: F401
from tests.bench.fakebench.behaviours import make_spec  # noqa: F401
