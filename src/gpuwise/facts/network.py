"""Network facts: NICs (sysfs + `ip -j addr`), RDMA devices, GPUDirect RDMA module, NCCL settings."""

from __future__ import annotations

import re

from gpuwise.capture.host import Host
from gpuwise.facts.models import Network, Nic, Unknown, combined
from gpuwise.facts.rdma import (
    add_netdevs,
    parse_ibdev2netdev,
    parse_ibstat,
    parse_ibstatus,
    parse_ibv_devinfo,
    read_sysfs_infiniband,
)
from gpuwise.facts.sourcing import command_json, command_text, file_text, to_int
from gpuwise.i18n import joined, msg

PEERMEM_MODULES = ("nvidia_peermem", "nv_peer_mem")  # in-tree since driver 470; the older Mellanox module


def collect_network(host: Host) -> Network:
    """NICs, RDMA HCAs and ports, nvidia_peermem, /etc/nccl.conf and NCCL_* environment variables."""
    net = Network()
    _nics(net, host)
    _rdma(net, host)
    _ofed(net, host)

    modules, reason = file_text(host, "/proc/modules")
    if modules is None:
        net.why("nvidia_peermem_loaded", reason)
    else:
        loaded = {line.split()[0] for line in modules.splitlines() if line.split()}
        net.nvidia_peermem_loaded = any(m in loaded for m in PEERMEM_MODULES)

    conf, reason = file_text(host, "/etc/nccl.conf")
    if conf is None:
        net.why("nccl_conf", msg("no /etc/nccl.conf ({reason})").format(reason=reason), kind=reason.kind)
    else:
        net.nccl_conf = parse_nccl_conf(conf)

    env, reason = command_json(host, "env")
    if isinstance(env, dict) and isinstance(env.get("env"), dict):
        net.nccl_env = {k: str(v) for k, v in sorted(env["env"].items()) if str(k).startswith("NCCL_")}
    else:
        net.why("nccl_env", reason or msg("`env` output has no 'env' object"), kind="unparsable")
    return net


def parse_ofed_info(text: str) -> str | None:
    """`ofed_info -s` prints one line such as "MLNX_OFED_LINUX-23.10-1.1.9.0:" (the trailing colon is its own)."""
    for line in text.splitlines():
        line = line.strip().rstrip(":").strip()
        if line and " " not in line:
            return line
    return None


def _ofed(net: Network, host: Host) -> None:
    """The OFED stack's version: `ofed_info -s`, else the version an MLNX_OFED mlx5_core module records."""
    if not net.rdma_devices:
        net.why("ofed_version", msg("no RDMA devices, so no OFED stack to compare"), kind="not_applicable")
        return
    text, reason = command_text(host, "ofed_info-s")
    version = parse_ofed_info(text) if text else None
    if version:
        net.ofed_version = version
        return
    module, file_reason = file_text(host, "/sys/module/mlx5_core/version")
    if module and module.strip():
        net.ofed_version = f"mlx5_core {module.strip()}"
        return
    why = reason or Unknown(kind="unparsable", text=msg("`ofed_info -s` printed no version"))
    net.why(
        "ofed_version",
        msg(
            "{reason}; /sys/module/mlx5_core/version: {file} (inbox kernel drivers carry no OFED version)"
        ).format(reason=why.text, file=file_reason.text if file_reason else msg("empty")),
        kind=why.kind,
    )


def parse_nccl_conf(text: str) -> dict[str, str]:
    """KEY=VALUE lines; '#' starts a comment; other lines are ignored."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        key, sep, value = line.partition("=")
        if sep and re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", key.strip()):
            out[key.strip()] = value.strip().strip("\"'")
    return out


def parse_ip_addr(data: object) -> dict[str, dict]:
    """`ip -j addr` JSON -> {ifname: {"mtu", "operstate", "address", "link_type", "ipv4": [...]}}."""
    out: dict[str, dict] = {}
    if not isinstance(data, list):
        return out
    for item in data:
        if not isinstance(item, dict) or not isinstance(item.get("ifname"), str):
            continue
        ipv4 = [
            f"{a.get('local')}/{a.get('prefixlen')}"
            for a in (item.get("addr_info") if isinstance(item.get("addr_info"), list) else [])
            if isinstance(a, dict) and a.get("family") == "inet" and a.get("local")
        ]
        out[item["ifname"]] = {
            "mtu": item.get("mtu") if type(item.get("mtu")) is int else None,
            "operstate": item.get("operstate") if isinstance(item.get("operstate"), str) else None,
            "address": item.get("address") if isinstance(item.get("address"), str) else None,
            "link_type": item.get("link_type"),
            "ipv4": ipv4,
        }
    return out


def _sys(host: Host, name: str, attr: str) -> str | None:
    text = host.read_file(f"/sys/class/net/{name}/{attr}")
    return text.strip() if text is not None else None


def _nics(net: Network, host: Host) -> None:
    sys_names = sorted(
        {
            m.group(1)
            for p in host.glob("/sys/class/net/*/*")
            if (m := re.match(r"^/sys/class/net/([^/]+)/", p))
        }
    )
    ip_data, ip_reason = command_json(host, "ip-j-addr")
    ip_info = parse_ip_addr(ip_data)
    if ip_data is None:
        net.why("nics.ipv4", ip_reason or msg("`ip -j addr` printed JSON null"), kind="unparsable")
    names = sys_names + sorted(set(ip_info) - set(sys_names))
    if not names:
        net.why(
            "nics",
            msg("no interfaces in /sys/class/net and none from ip ({reason})").format(
                reason=ip_reason or msg("empty output")
            ),
            kind=ip_reason.kind if ip_reason else "not_applicable",
        )
    for name in names:
        ip = ip_info.get(name, {})
        nic = Nic(name=name, ipv4=ip.get("ipv4", []))
        in_sysfs = name in sys_names
        uevent = _sys(host, name, "device/uevent") if in_sysfs else None
        if uevent is not None:
            drv = re.search(r"^DRIVER=(\S+)", uevent, re.MULTILINE)
            nic.driver = drv.group(1) if drv else None
        # No backing device means a software interface: lo, docker0, veth*, bridges, ifb*, tunnels.
        # Known only from `ip`: loopback, and tun/wireguard devices (link_type "none"), have no hardware.
        nic.virtual = uevent is None if in_sysfs else ip.get("link_type") in ("loopback", "none")
        nic.mtu = to_int(_sys(host, name, "mtu")) if in_sysfs else None
        nic.mtu = nic.mtu if nic.mtu is not None else ip.get("mtu")
        state = (_sys(host, name, "operstate") if in_sysfs else None) or ip.get("operstate")
        nic.state = state.lower() if state else None
        nic.mac = (_sys(host, name, "address") if in_sysfs else None) or ip.get("address")
        speed_text = _sys(host, name, "speed") if in_sysfs else None
        speed = to_int(speed_text)
        if speed is not None and speed > 0:
            nic.speed_mbps = speed
        elif speed_text is None:
            net.why(
                f"nics.{name}.speed_mbps",
                msg("no speed in sysfs (not reported by this interface type)"),
                kind="not_applicable",
            )
        else:
            net.why(
                f"nics.{name}.speed_mbps",
                msg("sysfs speed is {speed}: link down or not reported by the driver").format(
                    speed=repr(speed_text)
                ),
                kind="not_applicable",
            )
        if nic.driver is None and not nic.virtual:
            net.why(f"nics.{name}.driver", msg("no DRIVER= in sysfs device/uevent"), kind="unparsable")
        net.nics.append(nic)


def _rdma(net: Network, host: Host) -> None:
    _rdma_ports(net, host)
    text, _reason = command_text(host, "ibdev2netdev")
    netdevs = parse_ibdev2netdev(text) if text else {}
    if not netdevs:
        return
    had_devices = bool(net.rdma_devices)
    net.rdma_devices = add_netdevs(net.rdma_devices, netdevs)
    if not had_devices:
        net.rdma_source = "ibdev2netdev"
        net.unknown.pop("rdma_devices", None)


def _rdma_ports(net: Network, host: Host) -> None:
    reasons: list[Unknown] = []
    sources = (("ibv_devinfo-v", parse_ibv_devinfo), ("ibstat", parse_ibstat), ("ibstatus", parse_ibstatus))
    for command_id, parser in sources:
        text, reason = command_text(host, command_id)
        devices = parser(text) if text else []
        if devices:
            net.rdma_devices, net.rdma_source = devices, command_id
            return
        if command_id == "ibstatus" and reason is not None and reason.kind == "not_captured":
            continue  # a capture from before gpuwise recorded ibstatus: the other sources say why
        reasons.append(
            reason
            or Unknown(
                kind="not_applicable", text=msg("{command}: no devices listed").format(command=command_id)
            )
        )
    devices = read_sysfs_infiniband(host)
    if devices:
        net.rdma_devices, net.rdma_source = devices, "/sys/class/infiniband"
        return
    reasons.append(Unknown(kind="not_applicable", text=msg("/sys/class/infiniband: no devices")))
    net.why(
        "rdma_devices",
        combined(
            reasons,
            msg("no RDMA devices found: {reasons}").format(reasons=joined("; ", (r.text for r in reasons))),
        ),
    )
