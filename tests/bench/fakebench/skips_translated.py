"""Fake benchmark: skips with a reason written through _() in the worker process."""

from tests.bench.fakebench.behaviours import make_spec  # noqa: F401
from tests.bench.fakebench.behaviours import skips_in_the_run_language as run  # noqa: F401
