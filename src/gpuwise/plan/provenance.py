"""Where each of an option's numbers came from, as a kind a program reads and a text a person reads.

Decisions read the kind (`row.provenance.kind("mfu") is Kind.FALLBACK`, `row.provenance.measured()`),
never the words; the text stays as it was for `-v`, the plan's sources and the JSON's `provenance`.
The JSON carries the kinds beside it (`provenance_kind`: key -> kind value).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum


class Kind(StrEnum):
    """Where a value came from. The values are JSON enum values (never translated)."""

    WORKLOAD = "workload"  # given in the workload file (e.g. model.mfu)
    OPTIONS = "options"  # given in the options file (a user's override of a default)
    CALIBRATED = "calibrated"  # measured on the user's machines and passed with --calibrate
    STABILITY = "stability"  # a stability run's measured spread, passed with --calibrate
    CATALOG = "catalog"  # gpuwise's catalog: vendor specs, offer prices, on-prem default costs
    PUBLISHED = "published"  # a sourced default of plan_defaults.yaml (a published figure)
    DERIVED = "derived"  # computed from other sourced values (a derived price, a fraction of capex)
    FALLBACK = "fallback"  # a generic fallback: nothing specific is known for this option
    UNKNOWN = "unknown"  # no value known


MEASURED = frozenset({Kind.CALIBRATED, Kind.STABILITY})  # the kinds a --calibrate file produces


@dataclass(frozen=True)
class Source:
    kind: Kind
    text: str


class Provenance(Mapping[str, str]):
    """key -> Source; reads as key -> text (`prov["mfu"]`, `.get`, `.values()`), written with a Source only."""

    def __init__(self, sources: Mapping[str, Source] | None = None) -> None:
        self._sources: dict[str, Source] = {}
        for key, source in (sources or {}).items():
            self[key] = source

    def __setitem__(self, key: str, source: Source) -> None:
        if not isinstance(source, Source):
            raise TypeError(f"provenance {key!r} needs a Source (kind and text), not {type(source).__name__}")
        self._sources[key] = source

    def __getitem__(self, key: str) -> str:
        return self._sources[key].text

    def __iter__(self) -> Iterator[str]:
        return iter(self._sources)

    def __len__(self) -> int:
        return len(self._sources)

    def __repr__(self) -> str:
        return f"Provenance({self._sources!r})"

    def source(self, key: str) -> Source:
        return self._sources[key]

    def kind(self, key: str) -> Kind | None:
        source = self._sources.get(key)
        return source.kind if source is not None else None

    def kinds(self) -> dict[str, str]:
        """key -> kind value, for the JSON."""
        return {key: source.kind.value for key, source in self._sources.items()}

    def measured(self) -> bool:
        """Whether any value came from a --calibrate measurement."""
        return any(source.kind in MEASURED for source in self._sources.values())
