"""Fake benchmark: see behaviours.litter."""

from tests.bench.fakebench.behaviours import litter as run  # noqa: F401
from tests.bench.fakebench.behaviours import make_spec  # noqa: F401
