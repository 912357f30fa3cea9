"""Fake benchmark: skips with a reason made with msg() in the worker process (worded by the caller)."""

from tests.bench.fakebench.behaviours import make_spec  # noqa: F401
from tests.bench.fakebench.behaviours import skips_with_a_message as run  # noqa: F401
