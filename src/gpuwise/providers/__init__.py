"""Offer sources: one module per cloud provider, each declaring `PROVIDER = Provider(...)`.

A provider says how gpuwise recognises one of its machines (DMI patterns, each with its source, read by
facts/platform.py), which shipped offers files hold its instance types (catalog/data/offers/, read by
catalog/offers.py; an absolute path names a file elsewhere) and, optionally, where its live price fetcher lives (a "module:function" string,
imported only when used). This package is pure data at the bottom of the layers: it imports only the
registry from gpuwise, so facts and catalog can both read it.

DMI patterns: every condition of a rule must hold (field=pattern, shell-style wildcards,
case-sensitive, on /sys/class/dmi/id/<field>). Providers are tried by `dmi_order`, lowest first, and a
provider's rules in their order, so the most specific goes first: a platform other clouds are built
on (OpenStack) goes last, so a cloud's own marker wins. confidence: strong = unique to the provider;
weak = also seen elsewhere. Sources citing cloud_dmi.md refer to the rows of
../shared/fixtures/real/cloud_dmi.md (repository, path, commit).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpuwise.registry import Registry


@dataclass(frozen=True)
class DmiRule:
    """One way to recognise the provider from DMI strings."""

    conditions: tuple[tuple[str, str], ...]  # (DMI field, shell pattern); all must hold
    confidence: str  # "strong" or "weak"
    source: str
    label: str | None = None  # what to call the machine when this rule matched; default: the provider's
    instance_type: tuple[str, str] | None = None  # (DMI field, regex it must match) holding the instance type


@dataclass(frozen=True)
class Provider:
    name: str  # the Provider column of its offers, --provider, facts.platform.cloud_provider
    label: str  # "Amazon EC2"
    dmi: tuple[DmiRule, ...] = ()
    dmi_order: int = 100  # lower is tried first; generic platforms (OpenStack) last
    offers_files: tuple[str, ...] = ()  # shipped offers CSVs in gpuwise/catalog/data/offers/
    fetcher: str | None = None  # "module:function" of a live price fetcher, e.g. `catalog fetch tencent`

    def load_fetcher(self) -> Callable[..., Any] | None:
        """The live fetcher function, imported now (it may need an optional SDK); None when there is none."""
        if self.fetcher is None:
            return None
        module, _, attr = self.fetcher.partition(":")
        return getattr(importlib.import_module(module), attr)


# Every provider module of this package. A test passes its own `PROVIDERS.like()` to what reads it
# (facts/platform.py `match_cloud`, catalog/offers.py `load_offers`).
PROVIDERS: Registry[Provider] = Registry(
    "provider",
    packages=(__name__,),
    attribute="PROVIDER",
    item_type=Provider,
    order=lambda p: (p.dmi_order, p.name),
)


def providers(registry: Registry[Provider] | None = None) -> tuple[Provider, ...]:
    """Every provider, by DMI order (then name)."""
    return tuple((registry if registry is not None else PROVIDERS).values())


def get(name: str, registry: Registry[Provider] | None = None) -> Provider | None:
    return (registry if registry is not None else PROVIDERS).find(name.lower())
