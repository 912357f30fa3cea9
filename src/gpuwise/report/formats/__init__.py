"""Output formats: one module per format, found at run time. Adding a format = adding one file here.

Each module is named after its format (md.py for --format md) and defines
`RENDERER = Renderer(name=..., media_type=..., render=...)`, where
`render(doc: Document, *, width: int = 100, color: bool = False) -> str | bytes` renders any Document.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from gpuwise.report.document import Document


@dataclass(frozen=True)
class Renderer:
    name: str  # what --format takes
    media_type: str  # e.g. text/markdown; for files and HTTP
    render: Callable[..., str | bytes]  # render(doc, *, width=100, color=False)

    def __call__(self, doc: Document, *, width: int = 100, color: bool = False) -> str | bytes:
        return self.render(doc, width=width, color=color)


@cache
def _registry() -> dict[str, Renderer]:
    found: dict[str, Renderer] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        renderer = getattr(importlib.import_module(f"{__name__}.{info.name}"), "RENDERER", None)
        if isinstance(renderer, Renderer):
            # the module's name is the format's name, so --help can list formats without importing them
            assert renderer.name == info.name, f"formats/{info.name}.py defines format {renderer.name!r}"
            found[renderer.name] = renderer
    return found


def format_names() -> list[str]:
    """The formats --format accepts, sorted: ["json", "md", "text", ...]."""
    return sorted(_registry())


def get_renderer(name: str) -> Renderer:
    """The renderer for a --format value; a UserInputError with a did-you-mean for an unknown name."""
    from gpuwise.errors import UserInputError

    registry = _registry()
    key = (name or "").strip().lower()
    if key in registry:
        return registry[key]
    import difflib

    near = difflib.get_close_matches(key, list(registry), n=1)
    from gpuwise.i18n import _

    names = ", ".join(format_names())
    fix = _("use --format with one of: {names}").format(names=names)
    if near:
        fix = _("did you mean {name!r}? {fix}").format(name=near[0], fix=fix)
    raise UserInputError(_("--format {name!r} is not one of {names}").format(name=name, names=names), fix)


def render(doc: Document, fmt: str, *, width: int = 100, color: bool = False) -> str | bytes:
    """Render `doc` as format `fmt` (a shortcut for get_renderer(fmt)(doc, ...))."""
    return get_renderer(fmt)(doc, width=width, color=color)
