"""Facts of two machines side by side: the differences, by layer (what `gpuwise compare` and
`gpuwise launch`'s migration check show). Volatile readings (temperatures, clocks, free memory) are
not differences between machines and are left out.

Below report and launch, so both use the same diff (it moved here from report/compare.py).
"""

from __future__ import annotations

from typing import Any

from gpuwise.i18n import joined
from gpuwise.layers import PROBE_LAYERS
from gpuwise.textmodel import TextModel

# Readings that change from minute to minute; they are not differences between machines or setups.
VOLATILE = (
    "temperature_c",
    "sm_clock_mhz",
    "memory_free_bytes",
    "available_bytes",
    "free_bytes",
    "clock_event_reasons",
    "captured_at",
    "ecc_volatile_uncorrectable",
)
SKIP_TOP = ("schema", "meta")
# Facts field -> the probe layer(s) showing it ("software" -> "driver-cuda/toolchain").
FACT_LAYER = {
    field: joined("/", (name for name, fields in PROBE_LAYERS.items() if field in fields))
    for fields in PROBE_LAYERS.values()
    for field in fields
}


class FactDiff(TextModel):
    layer: str
    path: str
    a: Any = None
    b: Any = None


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "unknown":
                continue  # reasons, not facts
            _flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        seen: set[str] = set()
        for i, v in enumerate(value):
            # A stable key so the same GPU/NIC/mount lines up between A and B even if the order differs.
            key = next(
                (
                    str(v[k])
                    for k in ("index", "gpu_index", "id", "port", "mountpoint", "name")
                    if v.get(k) is not None
                ),
                str(i),
            )
            key = key if key not in seen else f"{key}#{i}"
            seen.add(key)
            _flatten(v, f"{prefix}[{key}]", out)
    else:
        out[prefix] = value


def diff_facts(a: dict, b: dict) -> list[FactDiff]:
    fa, fb = {}, {}
    for top in sorted(set(a) | set(b)):
        if top in SKIP_TOP:
            continue
        _flatten(a.get(top), top, fa)
        _flatten(b.get(top), top, fb)
    out = []
    for path in sorted(set(fa) | set(fb)):
        if path.rsplit(".", 1)[-1] in VOLATILE or fa.get(path) == fb.get(path):
            continue
        top = path.split(".")[0].split("[")[0]
        out.append(FactDiff(layer=FACT_LAYER.get(top, top), path=path, a=fa.get(path), b=fb.get(path)))
    return out
