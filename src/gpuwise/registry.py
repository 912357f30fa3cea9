"""One registry for every kind of plugin: doctor rules, benchmarks, report formats, providers, launch
targets and tune knobs.

A plugin is one module. Its kind's default registry finds it by scanning the kind's package (no list to
keep by hand) and collects what the module declares (`BENCHMARK = BenchInfo(...)`, `RENDERER = ...`,
rules made with `@rule(...)`); the scan happens when the registry is first read. Code that uses a kind
takes a registry argument that defaults to the kind's registry, so a test builds its own
`Registry(...)`, registers a plugin in it and passes it in, leaving the default one alone (the shape of
prometheus_client's `REGISTRY` and `CollectorRegistry()`).

    TARGETS = Registry("launch target", packages=("gpuwise.launch.targets",), attribute="TARGET")
    TARGETS.lookup("slurm")   # or a UserInputError that lists the known names
    for target in TARGETS.values(): ...   # stable order: `order`, then name

Registering a second, different plugin under a name is an error naming both modules; registering the
same object again (a module imported twice, a rule re-exported) is not.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import pkgutil
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any, Generic, TypeVar, overload

from gpuwise.errors import GpuwiseError, UserInputError
from gpuwise.i18n import N_, joined, msg

T = TypeVar("T")

UNKNOWN = N_("{kind} {name!r} is not one of {names}")
UNKNOWN_FIX = N_("use one of: {names}")


class DuplicateName(GpuwiseError):
    """Two different plugins of one kind claim the same name."""


def _name_attr(item: Any) -> str:
    for attr in ("name", "id"):
        value = getattr(item, attr, None)
        if isinstance(value, str):
            return value
    raise TypeError(f"{item!r} has no name: pass register(item, name=...)")


class Registry(Mapping[str, T], Generic[T]):
    """Plugins of one kind by name. A read-only Mapping (`reg[name]`, `name in reg`, `reg.values()`, in a
    stable order) plus `register`, `lookup` (an error a user can act on) and module discovery.

    kind: what a plugin is called in messages ("report format").
    packages: where the default registry finds its modules (each non-underscore module is imported).
    attribute: the module-level name a plugin module declares (`RENDERER`); without it, every value in
      the module of type `item_type` that the module itself defines is collected (rules), also when
      held in a module-level tuple.
    item_type: what counts as a plugin when collecting a module (None: anything found under `attribute`).
    make: turns what a module declares into the registered item (`BenchEntry.of(info, module)`).
    name: the item's name (default: its `name`, else its `id`); order: the sort key (default: the name).
    """

    def __init__(
        self,
        kind: str,
        *,
        packages: Iterable[str] = (),
        attribute: str | None = None,
        item_type: type | tuple[type, ...] | None = None,
        make: Callable[[Any, ModuleType], T] | None = None,
        name: Callable[[T], str] = _name_attr,
        order: Callable[[T], Any] | None = None,
        unknown: str = UNKNOWN,
        unknown_fix: str = UNKNOWN_FIX,
    ):
        self.kind = kind
        self.packages = tuple(packages)
        self.attribute, self.item_type, self._make = attribute, item_type, make
        self._name, self._order = name, order
        self._unknown, self._unknown_fix = unknown, unknown_fix
        self._items: dict[str, T] = {}
        self._origin: dict[str, str] = {}  # name -> the module that registered it
        self._discovered = not self.packages

    def like(self) -> Registry[T]:
        """An empty registry of the same kind and shape that discovers nothing (for tests)."""
        new: Registry[T] = Registry(
            self.kind,
            attribute=self.attribute,
            item_type=self.item_type,
            make=self._make,
            name=self._name,
            order=self._order,
            unknown=self._unknown,
            unknown_fix=self._unknown_fix,
        )
        return new

    # ------------------------------------------------------------ registering

    @overload
    def register(self, item: T, *, name: str | None = None, module: str | None = None) -> T: ...
    @overload
    def register(
        self, item: None = None, *, name: str | None = None, module: str | None = None
    ) -> Callable[[T], T]: ...

    def register(self, item=None, *, name=None, module=None):
        """`reg.register(item)`, or `@reg.register` / `@reg.register(name=...)` on a function or class.
        Returns the item, so a decorated definition keeps its value."""
        if item is None:
            return lambda it: self.register(it, name=name, module=module)
        key = name if name is not None else self._name(item)
        origin = module or (item.__module__ if isinstance(item, (type, FunctionType)) else _caller_module())
        previous = self._items.get(key)
        if previous is not None and previous is not item and previous != item:
            raise DuplicateName(
                msg("two {kind} plugins are named {name!r}: {first} and {second}").format(
                    kind=self.kind, name=key, first=self._origin[key], second=origin
                ),
                msg("rename one of them; names of one kind must be unique"),
            )
        self._items[key] = item
        self._origin.setdefault(key, origin)
        return item

    # ------------------------------------------------------------ discovery

    def collect(self, module: ModuleType) -> list[T]:
        """Register what one module declares; returns those items."""
        found: list[Any] = []
        if self.attribute is not None:
            value = getattr(module, self.attribute, None)
            if value is not None and (self.item_type is None or isinstance(value, self.item_type)):
                found.append(value)
        elif self.item_type is not None:
            values = [
                one
                for v in vars(module).values()
                for one in (v if isinstance(v, tuple) else (v,))  # a tuple of plugins made in a loop
            ]
            found = [v for v in values if isinstance(v, self.item_type) and _defined_in(v, module.__name__)]
        items = [self._make(v, module) if self._make else v for v in found]
        for item in items:
            self.register(item, module=module.__name__)
        return items

    def module_names(self) -> list[str]:
        """The plugin modules of `packages`, by module name, listed without importing them (for --help)."""
        return sorted(name for package in self.packages for name in plugin_modules(package))

    def discover(self) -> None:
        """Import every plugin module of `packages` and collect it (done once, on first read)."""
        self._discovered = True
        for package in self.packages:
            for name in sorted(plugin_modules(package)):
                self.collect(importlib.import_module(f"{package}.{name}"))

    def load_file(self, path: str | Path, module_name: str | None = None) -> ModuleType:
        """Import one plugin module from a file (outside any package) and collect it: a plugin that does
        not live in gpuwise's source tree, or a test's. The module stays in sys.modules under its name."""
        path = Path(path)
        name = module_name or f"gpuwise_plugin_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise UserInputError(
                msg("{path} is not a Python module").format(path=path), msg("pass a .py file")
            )
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        self.collect(module)
        return module

    def _ensure(self) -> dict[str, T]:
        if not self._discovered:
            self.discover()
        return self._items

    # ------------------------------------------------------------ reading

    def __getitem__(self, name: str) -> T:
        return self._ensure()[name]

    def __iter__(self) -> Iterator[str]:
        items = self._ensure()
        key = self._order or self._name
        return iter(sorted(items, key=lambda n: (key(items[n]), n)))

    def __len__(self) -> int:
        return len(self._ensure())

    def __contains__(self, name: object) -> bool:
        return name in self._ensure()

    def names(self) -> list[str]:
        """The names, in the registry's order."""
        return list(self)

    def origin(self, name: str) -> str:
        """The module that registered `name`."""
        self._ensure()
        return self._origin[name]

    def find(self, name: str | None) -> T | None:
        """The plugin named `name` (case and spaces ignored), or None."""
        if not name:
            return None
        items = self._ensure()
        return items.get(name) or items.get(name.strip().lower())

    def lookup(self, name: str | None) -> T:
        """The plugin named `name`, or a UserInputError listing the known names (with a did-you-mean)."""
        found = self.find(name)
        if found is not None:
            return found
        names = joined(", ", self.names())
        fix = msg(self._unknown_fix).format(names=names)
        near = difflib.get_close_matches((name or "").strip().lower(), self.names(), n=1)
        if near:
            fix = msg("did you mean {name!r}? {fix}").format(name=near[0], fix=fix)
        raise UserInputError(msg(self._unknown).format(kind=self.kind, name=name, names=names), fix)


def named_after_module(package: str):
    """A `make` for plugins found in `package` that must be named as their module (so `--help` can list
    them without importing any): formats/md.py declares the format "md"."""

    def make(item: Any, module: ModuleType) -> Any:
        short = module.__name__.rpartition(".")[2]
        if module.__name__.startswith(package + ".") and _name_attr(item) != short:
            raise ValueError(f"{module.__name__} declares {_name_attr(item)!r}, not {short!r}")
        return item

    return make


def _defined_in(value: Any, module: str) -> bool:
    """Was `value` made in `module` (not imported into it)? Plugins made by a decorator carry the
    decorated function's module (`fn`), instances made at module level their `module` when they set it."""
    for attr in ("fn", "func"):
        inner = getattr(value, attr, None)
        if inner is not None and getattr(inner, "__module__", None):
            return inner.__module__ == module
    declared = getattr(value, "module", None)
    return declared == module if isinstance(declared, str) else True


def plugin_modules(package: str) -> list[str]:
    """The modules of a package not starting with "_" (helpers), found without importing the package."""
    spec = importlib.util.find_spec(package)
    paths = list(spec.submodule_search_locations or []) if spec else []
    return [m.name for m in pkgutil.iter_modules(paths) if not m.name.startswith("_")]


def _caller_module() -> str:
    """The module that called register() (for the duplicate message)."""
    frame = sys._getframe(2)
    return str(frame.f_globals.get("__name__", "?"))
