"""The Prometheus text format (0.0.4) for one scrape, with dcgm-exporter's counters left as it names them.

prometheus-client writes a counter family NAME as `# TYPE NAME_total counter` with NAME_total samples.
dcgm-exporter's counters (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, ...) are
typed counter but keep their plain names, and dashboards query those names: an ExactNameCounter is
written that way (`# TYPE DCGM_FI_... counter`, samples DCGM_FI_...). Every other family is written as
prometheus-client writes it (counters NAME_total, info NAME_info gauges). Format reference:
https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client.metrics_core import Metric
from prometheus_client.registry import CollectorRegistry
from prometheus_client.utils import floatToGoString

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_TEXT_TYPES = {"info": "gauge", "stateset": "gauge", "gaugehistogram": "histogram", "unknown": "untyped"}


class ExactNameCounter(Metric):
    """A counter whose samples carry the family's own name (no _total), as dcgm-exporter writes them."""

    def __init__(self, name: str, documentation: str, labels: Iterable[str]) -> None:
        super().__init__(name, documentation, "counter")
        self._labelnames = tuple(labels)

    def add_metric(self, labels: Iterable[str], value: float) -> None:
        self.add_sample(self.name, dict(zip(self._labelnames, labels, strict=True)), value)


def _escape_help(text: str) -> str:
    return text.replace("\\", r"\\").replace("\n", r"\n")


def _escape_label(value: str) -> str:
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def exposed_name(family: Metric) -> str:
    """The name a family's # HELP / # TYPE lines carry in the text format."""
    if family.type == "counter" and not isinstance(family, ExactNameCounter):
        return family.name + "_total"
    if family.type == "info":
        return family.name + "_info"
    return family.name


def render_families(families: Iterable[Metric]) -> bytes:
    out: list[str] = []
    for family in families:
        name = exposed_name(family)
        out.append(f"# HELP {name} {_escape_help(family.documentation)}\n")
        out.append(f"# TYPE {name} {_TEXT_TYPES.get(family.type, family.type)}\n")
        for s in family.samples:
            labels = ",".join(f'{k}="{_escape_label(v)}"' for k, v in s.labels.items())
            out.append(f"{s.name}{{{labels}}} " if labels else f"{s.name} ")
            out.append(floatToGoString(s.value) + "\n")
    return "".join(out).encode("utf-8")


def render(registry: CollectorRegistry) -> bytes:
    """One scrape of every collector in the registry."""
    return render_families(registry.collect())
