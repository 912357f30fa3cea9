"""One layer vocabulary (gpuwise.layers) for facts, findings and the CLI."""

from __future__ import annotations

from typing import get_args

from gpuwise.advise.finding import Finding
from gpuwise.commands.probe import LAYER_CHOICES
from gpuwise.facts.diff import FACT_LAYER
from gpuwise.facts.models import Facts
from gpuwise.layers import LAYER_ORDER, PROBE_LAYERS


def test_findings_probe_and_compare_use_the_one_list():
    assert get_args(Finding.model_fields["layer"].annotation) == LAYER_ORDER
    assert tuple(PROBE_LAYERS) == LAYER_CHOICES and set(PROBE_LAYERS) <= set(LAYER_ORDER)
    assert FACT_LAYER["software"] == "driver-cuda/toolchain" and FACT_LAYER["gpus"] == "hardware"


def test_every_facts_section_belongs_to_a_probe_layer():
    sections = {name for name in Facts.model_fields if name not in ("schema_", "meta")}
    shown = {field for fields in PROBE_LAYERS.values() for field in fields}
    assert shown == sections  # a new Facts section must be given a layer, or probe --layer never shows it
