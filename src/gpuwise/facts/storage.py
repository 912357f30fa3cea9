"""Storage facts: mounts (findmnt / /proc/mounts) with sizes (df), block devices (lsblk / sysfs),
md RAID arrays (/proc/mdstat) and the size of /dev/shm."""

from __future__ import annotations

import re
from functools import lru_cache

from gpuwise.capture.host import Host
from gpuwise.facts.models import BlockDevice, MdArray, Mount, Storage, Unknown, combined
from gpuwise.facts.sourcing import binary_scale, command_json, command_text, file_text, load_data_csv, to_int
from gpuwise.i18n import joined, msg

# Compressed-RAM and loop devices are listed by lsblk as disks but hold no training data.
_NOT_STORAGE = re.compile(r"^(zram|loop|ram)\d+$")


@lru_cache(maxsize=1)
def network_fstypes() -> frozenset[str]:
    return frozenset(row["fstype"] for row in load_data_csv("network_fstypes.csv", ("fstype", "kind")))


def is_network_fs(fstype: str | None) -> bool:
    return bool(fstype) and fstype in network_fstypes()


def flatten_findmnt(data: object) -> list[Mount]:
    """`findmnt -J` nests children under their parent mount; walk the tree depth-first."""
    out: list[Mount] = []
    top = data.get("filesystems") if isinstance(data, dict) else None
    stack = list(reversed(top)) if isinstance(top, list) else []
    while stack:
        fs = stack.pop()
        if not isinstance(fs, dict):
            continue
        target = fs.get("target")
        if isinstance(target, str) and target:
            fstype = fs.get("fstype") if isinstance(fs.get("fstype"), str) else None
            out.append(
                Mount(
                    mountpoint=target,
                    device=fs.get("source") if isinstance(fs.get("source"), str) else None,
                    fstype=fstype,
                    options=fs.get("options") if isinstance(fs.get("options"), str) else None,
                    network=is_network_fs(fstype),
                )
            )
        children = fs.get("children")
        if isinstance(children, list):
            stack.extend(reversed(children))
    return out


def _unescape_mount(field: str) -> str:
    """/proc/mounts escapes space, tab, newline and backslash as octal (\\040)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def parse_proc_mounts(text: str) -> list[Mount]:
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4:
            fstype = parts[2]
            out.append(
                Mount(
                    mountpoint=_unescape_mount(parts[1]),
                    device=_unescape_mount(parts[0]),
                    fstype=fstype,
                    options=parts[3],
                    network=is_network_fs(fstype),
                )
            )
    return out


_DF_LINE = re.compile(r"^(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(/.*)$")


def parse_df(text: str) -> dict[str, tuple[int, int]]:
    """`df -P -B1` -> {mountpoint: (total_bytes, available_bytes)}."""
    out = {}
    for line in text.splitlines():
        m = _DF_LINE.match(line.rstrip())
        if m:
            out[m.group(6)] = (int(m.group(2)), int(m.group(4)))
    return out


def _flag(value: object) -> bool | None:
    """lsblk prints ROTA as true/false (new) or "1"/"0" (old util-linux)."""
    if isinstance(value, bool):
        return value
    if str(value).strip() in ("1", "0"):
        return str(value).strip() == "1"
    return None


def parse_lsblk(data: object) -> list[BlockDevice]:
    """`lsblk -J -b -o NAME,TYPE,SIZE,ROTA,TRAN,MODEL,MOUNTPOINT` -> whole disks (children skipped)."""
    out = []
    devices = data.get("blockdevices") if isinstance(data, dict) else None
    for dev in devices if isinstance(devices, list) else []:
        if not isinstance(dev, dict) or not isinstance(dev.get("name"), str):
            continue
        name = dev["name"]
        if dev.get("type") != "disk" or _NOT_STORAGE.match(name):
            continue
        tran = dev.get("tran") if isinstance(dev.get("tran"), str) else None
        model = dev.get("model") if isinstance(dev.get("model"), str) else None
        out.append(
            BlockDevice(
                name=name,
                size_bytes=to_int(dev.get("size")),
                rotational=_flag(dev.get("rota")),
                nvme=name.startswith("nvme") or tran == "nvme",
                model=model.strip() if model and model.strip() else None,
            )
        )
    return out


def read_sysfs_block(host: Host) -> list[BlockDevice]:
    names = sorted(
        {
            m.group(1)
            for p in host.glob("/sys/block/*/size")
            if (m := re.match(r"^/sys/block/([^/]+)/size$", p))
        }
    )
    out = []
    for name in names:
        if _NOT_STORAGE.match(name):
            continue
        sectors = to_int(host.read_file(f"/sys/block/{name}/size"))  # always 512-byte units in sysfs
        model = (host.read_file(f"/sys/block/{name}/device/model") or "").strip()
        out.append(
            BlockDevice(
                name=name,
                size_bytes=sectors * 512 if sectors is not None else None,
                rotational=_flag(host.read_file(f"/sys/block/{name}/queue/rotational")),
                nvme=name.startswith("nvme"),
                model=model or None,
            )
        )
    return out


def parse_mdstat(text: str) -> list[MdArray]:
    """/proc/mdstat: 'md0 : active raid0 nvme1n1[0] nvme6n1[1]', 'md1 : inactive sdb[0](S)'."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^(md\S*)\s*:\s*(active|inactive)\s*(.*)$", line.strip())
        if not m:
            continue
        words = [w for w in m.group(3).split() if not re.fullmatch(r"\([\w-]+\)", w)]  # drop (auto-read-only)
        level = words[0] if words and "[" not in words[0] else None
        members = [re.sub(r"\[\d+\].*$", "", w) for w in words[1 if level else 0 :] if "[" in w]
        out.append(MdArray(name=m.group(1), level=level, devices=members, active=m.group(2) == "active"))
    return out


def _shm_from_options(options: str | None) -> int | None:
    m = re.search(r"(?:^|,)size=(\d+)([kmg]?)(?:,|$)", options or "")
    if not m:
        return None
    return int(m.group(1)) * binary_scale(m.group(2))


def collect_storage(host: Host) -> Storage:
    """Mounts with sizes, whole-disk block devices, md arrays and /dev/shm size."""
    st = Storage()
    data, reason = command_json(host, "findmnt-J")
    mounts = flatten_findmnt(data) if data is not None else []
    if not mounts:
        text, proc_reason = file_text(host, "/proc/mounts")
        mounts = parse_proc_mounts(text) if text else []
        if not mounts:
            parts = [
                reason or Unknown(kind="unparsable", text=msg("findmnt listed nothing")),
                proc_reason or Unknown(kind="unparsable", text=msg("/proc/mounts empty")),
            ]
            st.why("mounts", combined(parts, joined("; ", (r.text for r in parts))))
    df_text, df_reason = command_text(host, "df-P-B1")
    sizes = parse_df(df_text) if df_text else {}
    if df_text is None:
        st.why("mounts.total_bytes", df_reason)
    for mount in mounts:
        if mount.mountpoint in sizes:
            mount.total_bytes, mount.free_bytes = sizes[mount.mountpoint]
    st.mounts = mounts

    shm = sizes.get("/dev/shm")
    if shm is not None:
        st.shm_bytes = shm[0]
    else:
        shm_mount = next((m for m in reversed(mounts) if m.mountpoint == "/dev/shm"), None)
        st.shm_bytes = _shm_from_options(shm_mount.options) if shm_mount else None
        if st.shm_bytes is None:
            if shm_mount is None and mounts:
                st.why("shm_bytes", msg("no /dev/shm mount found"), kind="not_applicable")
            else:
                st.why("shm_bytes", df_reason or msg("no size for /dev/shm"), kind="unparsable")

    data, reason = command_json(host, "lsblk-J")
    st.block_devices = parse_lsblk(data) if data is not None else read_sysfs_block(host)
    if not st.block_devices:
        first = reason or Unknown(kind="not_applicable", text=msg("lsblk listed no disks"))
        st.why(
            "block_devices",
            Unknown(kind=first.kind, text=msg("{reason}; no disks in /sys/block").format(reason=first.text)),
        )

    text, reason = file_text(host, "/proc/mdstat")
    if text is None:
        st.why("md_arrays", reason)
    else:
        st.md_arrays = parse_mdstat(text)
    return st
