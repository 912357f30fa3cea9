"""Output formats: one module per format, found by the registry `FORMATS`. Adding a format = adding one file here.

Each module is named after its format (md.py for --format md) and defines
`RENDERER = Renderer(name=..., media_type=..., render=...)`, where
`render(doc: Document, *, width: int = 100, color: bool = False) -> str | bytes` renders any Document.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gpuwise.i18n import N_
from gpuwise.registry import Registry, named_after_module
from gpuwise.report.document import Document


@dataclass(frozen=True)
class Renderer:
    name: str  # what --format takes
    media_type: str  # e.g. text/markdown; for files and HTTP
    render: Callable[..., str | bytes]  # render(doc, *, width=100, color=False)

    def __call__(self, doc: Document, *, width: int = 100, color: bool = False) -> str | bytes:
        return self.render(doc, width=width, color=color)


# Every module here that declares RENDERER. A test passes its own `FORMATS.like()`.
FORMATS: Registry[Renderer] = Registry(
    "report format",
    packages=(__name__,),
    attribute="RENDERER",
    item_type=Renderer,
    make=named_after_module(__name__),  # --help lists formats without importing them
    unknown=N_("--format {name!r} is not one of {names}"),
    unknown_fix=N_("use --format with one of: {names}"),
)


def format_names(registry: Registry[Renderer] | None = None) -> list[str]:
    """The formats --format accepts, sorted: ["json", "md", "text", ...]."""
    return (registry if registry is not None else FORMATS).names()


def get_renderer(name: str, registry: Registry[Renderer] | None = None) -> Renderer:
    """The renderer for a --format value; a UserInputError with a did-you-mean for an unknown name."""
    return (registry if registry is not None else FORMATS).lookup(name)


def render(
    doc: Document,
    fmt: str,
    *,
    width: int = 100,
    color: bool = False,
    registry: Registry[Renderer] | None = None,
) -> str | bytes:
    """Render `doc` as format `fmt` (a shortcut for get_renderer(fmt)(doc, ...))."""
    return get_renderer(fmt, registry)(doc, width=width, color=color)
