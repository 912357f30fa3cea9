"""`gpuwise capture --mask`: replace hostnames, serials, UUIDs and MACs with stable placeholders.

Stable means the same original always maps to the same placeholder within one capture, and the
placeholder keeps the original's shape (a MAC stays a MAC), so the parsers read a masked capture
exactly as they read the original.
"""

from __future__ import annotations

import re

_MAC = re.compile(r"\b(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}\b")
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
# Serial-number fields as nvidia-smi (XML and text) and NVML JSON print them.
_SERIAL_FIELDS = (
    re.compile(r"<serial>\s*([^<\s][^<]*?)\s*</serial>"),
    re.compile(r"^\s*Serial Number\s*:\s*(\S.*?)\s*$", re.MULTILINE),
    re.compile(r'"serial"\s*:\s*"([^"]+)"'),
)
_NOT_SERIALS = {"N/A", "[N/A]", "Not Specified", "None", "To be filled by O.E.M.", "Default string", "0"}


class Masker:
    def __init__(self, hostnames: list[str], serials: list[str]):
        self._map: dict[str, str] = {}
        self._counts: dict[str, int] = {}
        # Longest first, so "node1.cluster" is replaced before "node1".
        self._literals = sorted(
            {h for h in hostnames if h and len(h) > 1 and h != "localhost"}, key=len, reverse=True
        )
        self._serials = sorted(
            {s for s in serials if s and s.strip() not in _NOT_SERIALS}, key=len, reverse=True
        )
        for h in self._literals:
            self._placeholder("host", h)
        for s in self._serials:
            self._placeholder("serial", s)

    def _placeholder(self, kind: str, original: str) -> str:
        key = original.lower() if kind in ("mac", "uuid") else original
        if key not in self._map:
            n = self._counts[kind] = self._counts.get(kind, 0) + 1
            self._map[key] = {
                "host": f"host-{n}",
                "serial": f"SERIAL-{n:06d}",
                "mac": f"02:00:00:{(n >> 16) & 255:02x}:{(n >> 8) & 255:02x}:{n & 255:02x}",
                "uuid": f"00000000-0000-4000-8000-{n:012x}",
            }[kind]
        return self._map[key]

    def apply(self, text: str) -> str:
        for lit in self._literals + self._serials:
            if lit in text:
                # whole tokens only: a host called "vm" must not turn "kvm" into "khost-1"
                text = re.sub(rf"(?<![A-Za-z0-9_-]){re.escape(lit)}(?![A-Za-z0-9_-])", self._map[lit], text)
        text = _MAC.sub(lambda m: self._mac(m.group(0)), text)
        return _UUID.sub(lambda m: self._placeholder("uuid", m.group(0)), text)

    def _mac(self, mac: str) -> str:
        if mac.lower() in ("00:00:00:00:00:00", "ff:ff:ff:ff:ff:ff"):
            return mac  # loopback / broadcast carry no identity
        return self._placeholder("mac", mac)

    @property
    def counts(self) -> dict[str, int]:
        return dict(self._counts)


def find_serials(texts: list[str]) -> list[str]:
    """Serial numbers printed in nvidia-smi / NVML outputs."""
    found = []
    for text in texts:
        for rx in _SERIAL_FIELDS:
            found.extend(m.group(1).strip() for m in rx.finditer(text))
    return found
