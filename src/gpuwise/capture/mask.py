"""`gpuwise capture --mask`: replace hostnames, serials, UUIDs, MACs and IP addresses with placeholders.

Stable means the same original always maps to the same placeholder within one capture, and the
placeholder keeps the original's shape (a MAC stays a MAC), so the parsers read a masked capture
exactly as they read the original.

IP addresses keep their subnet relations: IPv4 is mapped octet-prefix by octet-prefix (two addresses
in one /8, /16 or /24 are still in one /8, /16 or /24 after masking; the host octet is kept), and
IPv6 keeps /48 and /64 equality while its interface id (often derived from the MAC) is replaced.
Addresses without identity stay: loopback, unspecified, broadcast, netmasks, multicast, and the
cloud metadata address 169.254.169.254.
"""

from __future__ import annotations

import ipaddress
import re

_MAC = re.compile(r"\b(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}\b")
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
# Serial-number fields as nvidia-smi (XML and text) and NVML JSON print them.
_SERIAL_FIELDS = (
    re.compile(r"<serial>\s*([^<\s][^<]*?)\s*</serial>"),
    re.compile(r"^\s*Serial Number\s*:\s*(\S.*?)\s*$", re.MULTILINE),
    re.compile(r'"serial"\s*:\s*"([^"]+)"'),
)
_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.]|\.\d)")
_IPV6 = re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])")
# A dotted quad that is a version number, not an address: cuDNN "9.1.0.70", TensorRT "8.6.1.6", said
# after the word "version" on the same line, or as a Debian version "9.1.0.70-1".
_VERSION_BEFORE = re.compile(r"(?:\b|_)ver(?:sion)?\b[^\n]{0,40}$", re.IGNORECASE)
_VERSION_AFTER = re.compile(r"-\d")
_KEEP_IPV4 = {"0.0.0.0", "255.255.255.255", "169.254.169.254"}
_NOT_SERIALS = {"N/A", "[N/A]", "Not Specified", "None", "To be filled by O.E.M.", "Default string", "0"}


class Masker:
    def __init__(self, hostnames: list[str], serials: list[str]):
        self._map: dict[str, str] = {}
        self._counts: dict[str, int] = {}
        self._levels: dict[str, dict[object, int]] = {}  # IP prefix -> its placeholder number, per level
        self._seen_ips: set[str] = set()
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
        text = _UUID.sub(lambda m: self._placeholder("uuid", m.group(0)), text)
        text = _IPV6.sub(lambda m: self._ipv6(m.group(0)), text)
        return _IPV4.sub(lambda m: m.group(0) if _is_version(m) else self._ipv4(m.group(0)), text)

    def _level(self, kind: str, key: object) -> int:
        """A small stable number per distinct key of one kind (0, 1, 2, ...)."""
        table = self._levels.setdefault(kind, {})
        return table.setdefault(key, len(table))

    def _ipv4(self, text: str) -> str:
        try:
            addr = ipaddress.IPv4Address(text)
        except ValueError:
            return text  # 999.1.2.3 and version strings are not addresses
        o = addr.packed
        if text in _KEEP_IPV4 or addr.is_loopback or addr.is_multicast or _is_netmask(int(addr)):
            return text
        self._count("ipv4", text)
        first = 10 + self._level("ipv4/8", o[0]) % 246
        second = self._level("ipv4/16", o[:2]) % 256
        third = self._level("ipv4/24", o[:3]) % 256
        return f"{first}.{second}.{third}.{o[3]}"

    def _ipv6(self, text: str) -> str:
        try:
            addr = ipaddress.IPv6Address(text)
        except ValueError:
            return text  # clock times, C++ scopes and MACs are not addresses
        if addr.is_loopback or addr.is_unspecified or addr.is_multicast:
            return text
        self._count("ipv6", text.lower())
        value = int(addr)
        iid = self._level("ipv6/iid", value & ((1 << 64) - 1)) + 1
        if addr.is_link_local:
            prefix = 0xFE80 << 112  # stays link-local; only the interface id was an identity
        else:
            n48 = self._level("ipv6/48", value >> 80)
            n64 = self._level("ipv6/64", value >> 64)
            prefix = (0xFD00 << 112) | ((n48 & 0xFFFFFFFF) << 80) | ((n64 & 0xFFFF) << 64)
        return str(ipaddress.IPv6Address(prefix | iid))

    def _count(self, kind: str, original: str) -> None:
        if original not in self._seen_ips:
            self._seen_ips.add(original)
            self._counts[kind] = self._counts.get(kind, 0) + 1

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


def _is_netmask(value: int) -> bool:
    """255.255.255.0 and friends: ones then zeros. They describe a subnet's size, not a host."""
    inverted = ~value & 0xFFFFFFFF
    return value != 0 and inverted & (inverted + 1) == 0


def _is_version(m: re.Match[str]) -> bool:
    before = m.string[max(0, m.start() - 48) : m.start()]
    return bool(_VERSION_BEFORE.search(before) or _VERSION_AFTER.match(m.string, m.end()))
