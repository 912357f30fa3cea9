"""RDMA (InfiniBand / RoCE) devices from `ibv_devinfo -v`, `ibstat`, `ibstatus`, or /sys/class/infiniband;
each port's network interface from `ibdev2netdev`.

States are normalised to the verbs names without the PORT_ prefix ("ACTIVE", "DOWN", "INIT"),
physical states to upper snake case ("LINK_UP", "DISABLED", "POLLING"), rates to Gb/s.
"""

from __future__ import annotations

import re

from gpuwise.capture.host import Host
from gpuwise.facts.models import RdmaDevice, RdmaPort
from gpuwise.facts.sourcing import to_float, to_int


def normalize_state(text: str | None) -> str | None:
    """'PORT_ACTIVE (4)', 'Active', '4: ACTIVE' -> 'ACTIVE'."""
    if not text:
        return None
    word = re.sub(r"\(\d+\)", "", text)
    word = re.sub(r"^\s*\d+:\s*", "", word).strip()
    word = re.sub(r"^PORT_", "", word, flags=re.IGNORECASE)
    return word.upper().replace(" ", "_") or None


def normalize_phys_state(text: str | None) -> str | None:
    """'LINK_UP (5)', 'LinkUp', '5: LinkUp' -> 'LINK_UP'."""
    if not text:
        return None
    word = re.sub(r"\(\d+\)", "", text)
    word = re.sub(r"^\s*\d+:\s*", "", word).strip()
    word = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", word)  # CamelCase from ibstat/sysfs
    return word.upper().replace(" ", "_") or None


def normalize_link_layer(text: str | None) -> str | None:
    if not text:
        return None
    low = text.strip().lower()
    if low.startswith("infiniband"):
        return "InfiniBand"
    if low.startswith("ethernet"):
        return "Ethernet"
    return text.strip() or None


def normalize_model(text: str | None) -> str | None:
    """ibstat's 'MT4129', ibv_devinfo's vendor_part_id '4129', sysfs hca_type 'MT4129' -> 'MT4129'."""
    word = (text or "").strip()
    if word.isdigit():
        return f"MT{word}"
    return word or None


def _width_lanes(text: str | None) -> int | None:
    m = re.match(r"^\s*(\d+)X", text or "")
    return int(m.group(1)) if m else None


def _lane_gbps(text: str | None) -> float | None:
    m = re.match(r"^\s*([\d.]+)\s*Gbps", text or "")
    return to_float(m.group(1)) if m else None


# Port lines the two tools print under different names: label -> (RdmaPort field, converter).
_IBV_PORT_FIELDS = {
    "state": ("state", normalize_state),
    "phys_state": ("phys_state", normalize_phys_state),
    "link_layer": ("link_layer", normalize_link_layer),
}
_IBSTAT_PORT_FIELDS = {
    "State": ("state", normalize_state),
    "Physical state": ("phys_state", normalize_phys_state),
    "Link layer": ("link_layer", normalize_link_layer),
    "Rate": ("rate_gbps", to_float),  # ibstat prints the rate in Gb/s already
}


def parse_ibv_devinfo(text: str) -> list[RdmaDevice]:
    """`ibv_devinfo [-v]`: hca_id blocks, then `port:` blocks. Rate needs -v (active_width x active_speed)."""
    devices: list[RdmaDevice] = []
    dev: RdmaDevice | None = None
    port: RdmaPort | None = None
    width: int | None = None
    for raw in text.splitlines():
        key, sep, value = raw.strip().partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        if key == "hca_id" and value:
            dev, port = RdmaDevice(name=value), None
            devices.append(dev)
        elif dev is None:
            continue
        elif key == "fw_ver" and port is None:
            dev.fw_version = value or None
        elif key == "vendor_part_id" and port is None:
            dev.model = normalize_model(value)
        elif key == "port" and to_int(value) is not None:
            port, width = RdmaPort(port=to_int(value)), None  # type: ignore[arg-type]
            dev.ports.append(port)
        elif port is None:
            continue
        elif key in _IBV_PORT_FIELDS:
            attr, parse = _IBV_PORT_FIELDS[key]
            setattr(port, attr, parse(value))
        elif key == "active_width":
            width = _width_lanes(value)
        elif key == "active_speed":
            lane = _lane_gbps(value)
            if width and lane:
                port.rate_gbps = round(width * lane, 2)
    return devices


def parse_ibstat(text: str) -> list[RdmaDevice]:
    """`ibstat`: "CA 'mlx5_0'" blocks with "Port N:" sub-blocks; Rate is already in Gb/s."""
    devices: list[RdmaDevice] = []
    dev: RdmaDevice | None = None
    port: RdmaPort | None = None
    for raw in text.splitlines():
        line = raw.strip()
        m = re.match(r"^CA\s+'([^']+)'", line)
        if m:
            dev, port = RdmaDevice(name=m.group(1)), None
            devices.append(dev)
            continue
        if dev is None:
            continue
        m = re.match(r"^Port\s+(\d+):\s*$", line)
        if m:
            port = RdmaPort(port=int(m.group(1)))
            dev.ports.append(port)
            continue
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        if key == "Firmware version" and port is None:
            dev.fw_version = value or None
        elif key == "CA type" and port is None:
            dev.model = normalize_model(value)
        elif port is None:
            continue
        elif key in _IBSTAT_PORT_FIELDS:
            attr, parse = _IBSTAT_PORT_FIELDS[key]
            setattr(port, attr, parse(value))
    return devices


_IBSTATUS_HEAD = re.compile(r"^Infiniband device '([^']+)' port (\d+) status:")
_IBSTATUS_FIELDS = {
    "state": ("state", normalize_state),
    "phys state": ("phys_state", normalize_phys_state),
    "link_layer": ("link_layer", normalize_link_layer),
}


def parse_ibstatus(text: str) -> list[RdmaDevice]:
    """`ibstatus`: one "Infiniband device 'mlx5_0' port 1 status:" block per port, with "state: 4: ACTIVE",
    "phys state: 5: LinkUp", "rate: 200 Gb/sec (4X HDR)" and "link_layer: InfiniBand" (no device model)."""
    devices: dict[str, RdmaDevice] = {}
    port: RdmaPort | None = None
    for raw in text.splitlines():
        line = raw.strip()
        m = _IBSTATUS_HEAD.match(line)
        if m:
            dev = devices.setdefault(m.group(1), RdmaDevice(name=m.group(1)))
            port = RdmaPort(port=int(m.group(2)))
            dev.ports.append(port)
            continue
        key, sep, value = line.partition(":")
        if port is None or not sep:
            continue
        key, value = key.strip(), value.strip()
        if key in _IBSTATUS_FIELDS:
            attr, parse = _IBSTATUS_FIELDS[key]
            setattr(port, attr, parse(value))
        elif key == "rate":
            port.rate_gbps = parse_sysfs_rate(value)
    return list(devices.values())


# "mlx5_0 port 1 ==> ibp26s0 (Down)", also as `ibdev2netdev | column -t` spaces it, and with -v's extra fields
_IBDEV2NETDEV = re.compile(r"^(\S+)\s+port\s+(\d+)\s+==>\s+(\S+)\s+\((\w+)\)")


def parse_ibdev2netdev(text: str) -> dict[tuple[str, int], tuple[str, str]]:
    """`ibdev2netdev`: (device, port) -> (network interface, its state "Up"/"Down")."""
    out: dict[tuple[str, int], tuple[str, str]] = {}
    for raw in text.splitlines():
        m = _IBDEV2NETDEV.match(raw.strip())
        if m:
            out[(m.group(1), int(m.group(2)))] = (m.group(3), m.group(4).capitalize())
    return out


def add_netdevs(
    devices: list[RdmaDevice], netdevs: dict[tuple[str, int], tuple[str, str]]
) -> list[RdmaDevice]:
    """Each port's netdev from `ibdev2netdev`; devices only it lists are added with their port's state
    unknown (its Up/Down is the interface's, not the RDMA port's)."""
    by_name = {d.name: d for d in devices}
    for (name, number), (netdev, state) in sorted(netdevs.items(), key=lambda kv: _natural(kv[0][0])):
        dev = by_name.get(name)
        if dev is None:
            dev = by_name[name] = RdmaDevice(name=name)
            devices.append(dev)
        port = next((p for p in dev.ports if p.port == number), None)
        if port is None:
            port = RdmaPort(port=number)
            dev.ports.append(port)
        port.netdev, port.netdev_state = netdev, state
    return devices


def _natural(name: str) -> tuple:
    """mlx5_2 before mlx5_10."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def parse_sysfs_rate(text: str | None) -> float | None:
    """'100 Gb/sec (4X EDR)' -> 100.0."""
    m = re.match(r"^\s*([\d.]+)\s*Gb/sec", text or "")
    return to_float(m.group(1)) if m else None


def read_sysfs_infiniband(host: Host) -> list[RdmaDevice]:
    """/sys/class/infiniband/<hca>/{fw_ver, ports/<n>/{state,phys_state,rate,link_layer}}."""
    devices: dict[str, RdmaDevice] = {}
    ports: dict[tuple[str, int], RdmaPort] = {}
    for path in host.glob("/sys/class/infiniband/*/ports/*/*"):
        m = re.match(r"^/sys/class/infiniband/([^/]+)/ports/(\d+)/(state|phys_state|rate|link_layer)$", path)
        if not m:
            continue
        name, number, attr = m.group(1), int(m.group(2)), m.group(3)
        dev = devices.setdefault(name, RdmaDevice(name=name))
        port = ports.get((name, number))
        if port is None:
            port = ports[(name, number)] = RdmaPort(port=number)
            dev.ports.append(port)
        value = (host.read_file(path) or "").strip()
        if attr == "state":
            port.state = normalize_state(value)
        elif attr == "phys_state":
            port.phys_state = normalize_phys_state(value)
        elif attr == "rate":
            port.rate_gbps = parse_sysfs_rate(value)
        else:
            port.link_layer = normalize_link_layer(value)
    for name, dev in devices.items():
        fw = host.read_file(f"/sys/class/infiniband/{name}/fw_ver")
        dev.fw_version = fw.strip() if fw and fw.strip() else None
        dev.model = normalize_model(host.read_file(f"/sys/class/infiniband/{name}/hca_type"))
        dev.ports.sort(key=lambda p: p.port)
    return [devices[k] for k in sorted(devices)]


# what each tool's output starts its blocks with, for a pasted file of unknown kind (doctor --evidence)
RDMA_FORMATS = (
    ("ibv_devinfo", re.compile(r"^\s*hca_id:\s*\S+", re.M), parse_ibv_devinfo),
    ("ibstat", re.compile(r"^\s*CA '[^']+'\s*$", re.M), parse_ibstat),
    ("ibstatus", re.compile(r"^\s*Infiniband device '[^']+' port \d+ status:", re.M), parse_ibstatus),
)


def rdma_format(text: str) -> str | None:
    """Which RDMA tool printed `text`: 'ibv_devinfo', 'ibstat', 'ibstatus', 'ibdev2netdev', or None."""
    for name, head, _parse in RDMA_FORMATS:
        if head.search(text):
            return name
    if any(_IBDEV2NETDEV.match(line.strip()) for line in text.splitlines()):
        return "ibdev2netdev"
    return None


def read_rdma_text(text: str, devices: list[RdmaDevice]) -> list[RdmaDevice]:
    """`devices` with what one tool's pasted output adds: its devices (replacing same-named ones) or, for
    ibdev2netdev, each port's netdev. ValueError when the text lists nothing."""
    kind = rdma_format(text)
    if kind == "ibdev2netdev":
        return add_netdevs(list(devices), parse_ibdev2netdev(text))
    parser = next((p for name, _head, p in RDMA_FORMATS if name == kind), None)
    found = parser(text) if parser else []
    if not found:
        raise ValueError("no RDMA devices listed")
    netdevs = {  # an ibdev2netdev file given before this one: keep what it said of each port
        (d.name, p.port): (p.netdev, p.netdev_state) for d in devices for p in d.ports if p.netdev
    }
    names = {d.name for d in found}
    return add_netdevs([d for d in devices if d.name not in names] + found, netdevs)  # type: ignore[arg-type]
