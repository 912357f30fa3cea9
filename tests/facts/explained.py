"""The fuzz tests' common assertion: a fact left None must say why, whatever the input was."""

from __future__ import annotations

from gpuwise.facts.models import Part


def assert_every_none_is_explained(part: Part) -> None:
    """Every field of `part` that is None has an entry in `part.unknown` (any shape of reason)."""
    fields = [f for f in type(part).model_fields if f != "unknown"]
    unexplained = [f for f in fields if getattr(part, f) is None and f not in part.unknown]
    assert unexplained == [], f"{type(part).__name__}: None without a reason: {unexplained}"
