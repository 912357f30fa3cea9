"""Fake benchmark: its tool is missing (see behaviours.needs_a_tool)."""

from tests.bench.fakebench.behaviours import make_spec  # noqa: F401
from tests.bench.fakebench.behaviours import needs_a_tool as run  # noqa: F401
