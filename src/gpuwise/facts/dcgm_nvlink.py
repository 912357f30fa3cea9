"""`dcgmi nvlink --link-status` (DCGM): the state of every NVLink of each GPU and NVSwitch.

+----------------------+
|  NvLink Link Status  |
+----------------------+
GPUs:
    gpuId 0:
        U U U U D D ...
NvSwitches:
    physicalId 8:
        U U _ _ ...
Key: Up=U, Down=D, Disabled=X, Not Supported=_
"""

from __future__ import annotations

import re

from gpuwise.facts.models import DcgmNvlink
from gpuwise.facts.paste import unpaste

_ENTITY = re.compile(r"^\s*(?P<kind>gpuId|physicalId)\s+(?P<id>\d+)\s*:\s*(?P<rest>.*)$")
_STATES = re.compile(r"^[UDX_](?:\s+[UDX_])*$")


def looks_like_dcgm_nvlink(text: str) -> bool:
    return "NvLink Link Status" in text or ("Key: Up=U, Down=D" in text and "gpuId" in text)


def parse_dcgm_nvlink(text: str, source: str) -> DcgmNvlink:
    """Each GPU's and NVSwitch's link letters; ValueError when no GPU's links are in the text."""
    out = DcgmNvlink(source=source)
    current: tuple[str, str] | None = None
    for line in unpaste(text).splitlines():
        if m := _ENTITY.match(line):
            current = (m.group("kind"), m.group("id"))
            line = m.group("rest")
        stripped = line.strip()
        if current is None or not stripped or not _STATES.match(stripped):
            continue
        letters = stripped.replace(" ", "")
        kind, ident = current
        if kind == "gpuId":
            out.gpus[int(ident)] = out.gpus.get(int(ident), "") + letters
        else:
            out.switches[ident] = out.switches.get(ident, "") + letters
    if not out.gpus:
        raise ValueError("no 'gpuId N:' link rows")
    return out
