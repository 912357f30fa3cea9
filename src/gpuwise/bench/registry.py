"""The benchmarks, found in the bench package: each module that declares `BENCHMARK = BenchInfo(...)`.

A benchmark is one file: a module in gpuwise/bench/ with `BENCHMARK`, a frozen dataclass `Spec`,
`make_spec(ctx)` and `run(ctx, spec) -> list[Measurement]`. Nothing else lists it: `--only`, its
aliases, the `gpuwise bench --help` line, the result table's title and its timeouts all come from
its BenchInfo. The registry (`BENCHMARKS`) imports the modules (without torch) when first read.

Order is run order (BenchInfo.order, lowest first): cheap, informative layers first. Timeouts are per
benchmark and per mode; they bound a hang, they are not the expected duration (`gpuwise bench --quick`
took 26-45 s on the 2-core test VM in five runs, and 64 s once while other test suites loaded it).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from gpuwise.i18n import joined, msg
from gpuwise.registry import Registry


@dataclass(frozen=True)
class BenchInfo:
    """What a benchmark module says about itself, as its module-level `BENCHMARK`."""

    name: str  # what --only accepts
    layer: str  # Measurement.layer
    title: str  # the title of its table in `gpuwise bench` output
    help: str  # one line for `gpuwise bench --help`
    order: int  # run order, lowest first
    quick_timeout_s: float
    full_timeout_s: float
    aliases: tuple[str, ...] = ()  # other names --only accepts


@dataclass(frozen=True)
class BenchEntry:
    name: str  # what --only accepts
    layer: str  # Measurement.layer
    module: str
    title: str
    quick_timeout_s: float
    full_timeout_s: float
    help: str = ""
    aliases: tuple[str, ...] = ()
    order: int = 0

    @classmethod
    def of(cls, info: BenchInfo, module: str) -> BenchEntry:
        return cls(
            info.name,
            info.layer,
            module,
            info.title,
            info.quick_timeout_s,
            info.full_timeout_s,
            info.help,
            info.aliases,
            info.order,
        )

    def timeout_s(self, mode: str) -> float:
        return self.full_timeout_s if mode == "full" else self.quick_timeout_s

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)


# Every module of the bench package that declares `BENCHMARK` (modules starting with "_" are helpers:
# _preload is the forkserver's import list). A test passes its own `BENCHMARKS.like()` with one added.
BENCHMARKS: Registry[BenchEntry] = Registry(
    "benchmark",
    packages=("gpuwise.bench",),
    attribute="BENCHMARK",
    item_type=BenchInfo,
    make=lambda info, module: BenchEntry.of(info, module.__name__),
    order=lambda e: (e.order, e.name),
)


def benchmarks(registry: Registry[BenchEntry] | None = None) -> tuple[BenchEntry, ...]:
    """Every benchmark, in run order."""
    return tuple((registry if registry is not None else BENCHMARKS).values())


def titles(registry: Registry[BenchEntry] | None = None) -> dict[str, str]:
    """Layer -> the title of its table."""
    return {e.layer: msg(e.title) for e in benchmarks(registry)}


def select(only: str | None, registry: Registry[BenchEntry] | None = None) -> list[BenchEntry]:
    """The entries named in a comma list (names, layers or aliases), in run order; all when empty."""
    entries = benchmarks(registry)
    if not only:
        return list(entries)
    known = {e.name: e for e in entries}
    aliases = {key: e.name for e in entries for key in (e.layer, *e.aliases)}
    wanted = set()
    for raw in only.split(","):
        key = raw.strip().lower()
        if not key:
            continue
        key = aliases.get(key, key)
        if key not in known:
            import difflib

            from gpuwise.errors import UserInputError

            close = difflib.get_close_matches(key, list(known), n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise UserInputError(
                msg("unknown benchmark '{strip}'.{hint}").format(strip=raw.strip(), hint=hint),
                fix=msg("use --only with some of: {join}").format(join=joined(", ", known)),
            )
        wanted.add(key)
    return [e for e in entries if e.name in wanted]
