"""Storage facts: findmnt trees, /proc/mounts, df sizes, lsblk (new and old JSON), sysfs, mdstat, /dev/shm."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuwise.capture.host import LiveHost
from gpuwise.facts.storage import (
    collect_storage,
    flatten_findmnt,
    is_network_fs,
    parse_df,
    parse_lsblk,
    parse_mdstat,
    parse_proc_mounts,
)
from tests.facts.explained import assert_every_none_is_explained
from tests.facts.fake_host import FakeHost, json_shaped, missing

# A trimmed `findmnt -J` of this machine (2026-11-29) plus an NFS dataset mount and an s3fs bucket.
FINDMNT = {
    "filesystems": [
        {"target": "/", "source": "/dev/vda", "fstype": "ext4", "options": "rw,relatime", "children": [
            {"target": "/proc", "source": "proc", "fstype": "proc", "options": "rw,relatime"},
            {"target": "/dev", "source": "devtmpfs", "fstype": "devtmpfs", "options": "rw,relatime", "children": [
                {"target": "/dev/shm", "source": "tmpfs", "fstype": "tmpfs", "options": "rw,relatime,size=24683652k"}]},
            {"target": "/data", "source": "10.0.0.5:/export/data", "fstype": "nfs4", "options": "rw,vers=4.2"},
            {"target": "/mnt/bucket", "source": "s3fs", "fstype": "fuse.s3fs", "options": "rw,nosuid,nodev"},
        ]}
    ]
}  # fmt: skip

# `df -P -B1` as printed here, plus the two extra mounts.
DF = """Filesystem                  1-blocks        Used   Available Capacity Mounted on
tmpfs                    25276059648           0 25276059648       0% /dev/shm
/dev/vda                270553174016 24052613120 84891680768      23% /
10.0.0.5:/export/data  1099511627776  0 1099511627776 0% /data
"""


def test_findmnt_tree_df_sizes_and_network_kinds():
    st_ = collect_storage(FakeHost(commands={"findmnt-J": json.dumps(FINDMNT), "df-P-B1": DF}))
    mounts = {m.mountpoint: m for m in st_.mounts}
    assert list(mounts) == ["/", "/proc", "/dev", "/dev/shm", "/data", "/mnt/bucket"]  # depth-first order
    assert (mounts["/"].total_bytes, mounts["/"].free_bytes) == (270553174016, 84891680768)
    assert mounts["/data"].network and mounts["/mnt/bucket"].network and not mounts["/"].network
    assert mounts["/proc"].total_bytes is None
    assert st_.shm_bytes == 25276059648


def test_shm_size_from_mount_options_when_df_missing():
    st_ = collect_storage(FakeHost(commands={"findmnt-J": json.dumps(FINDMNT), "df-P-B1": missing("df")}))
    assert st_.shm_bytes == 24683652 * 1024
    assert st_.unknown["mounts.total_bytes"].text == "df not installed"


def test_proc_mounts_fallback_with_escapes():
    text = "/dev/nvme0n1p2 / ext4 rw,relatime 0 0\nserver:/my\\040share /mnt/my\\040share cifs rw 0 0\n"
    st_ = collect_storage(FakeHost(files={"/proc/mounts": text}, commands={"findmnt-J": missing("findmnt")}))
    assert [m.mountpoint for m in st_.mounts] == ["/", "/mnt/my share"]
    assert st_.mounts[1].network and st_.mounts[1].device == "server:/my share"


def test_lsblk_new_and_old_json():
    new = {"blockdevices": [
        {"name": "zram0", "type": "disk", "size": 0, "rota": False, "tran": None, "model": None, "mountpoint": None},
        {"name": "vda", "type": "disk", "size": 274877906944, "rota": True, "tran": None, "model": None, "mountpoint": "/"},
        {"name": "nvme0n1", "type": "disk", "size": 1000204886016, "rota": False, "tran": "nvme",
         "model": "SAMSUNG MZQL21T9HCJR-00A07 ", "children": [{"name": "nvme0n1p1", "type": "part", "size": 1}]},
    ]}  # fmt: skip
    old = {
        "blockdevices": [
            {
                "name": "sda",
                "type": "disk",
                "size": "480103981056",
                "rota": "1",
                "tran": "sata",
                "model": "ST480",
            }
        ]
    }
    devs = parse_lsblk(new)
    assert [(d.name, d.rotational, d.nvme, d.model) for d in devs] == [
        ("vda", True, False, None),
        ("nvme0n1", False, True, "SAMSUNG MZQL21T9HCJR-00A07"),
    ]
    assert [(d.name, d.size_bytes, d.rotational) for d in parse_lsblk(old)] == [("sda", 480103981056, True)]


def test_sysfs_block_fallback():
    files = {
        "/sys/block/nvme0n1/size": "3750748848\n",
        "/sys/block/nvme0n1/queue/rotational": "0\n",
        "/sys/block/nvme0n1/device/model": "Micron_7450\n",
        "/sys/block/loop0/size": "0\n",
    }
    st_ = collect_storage(FakeHost(files=files, commands={"lsblk-J": missing("lsblk")}))
    assert [(d.name, d.size_bytes, d.rotational, d.nvme, d.model) for d in st_.block_devices] == [
        ("nvme0n1", 3750748848 * 512, False, True, "Micron_7450")
    ]


# /proc/mdstat in the kernel's format (drivers/md/md.c md_seq_show): a 2-disk NVMe raid0, an array
# started read-only, and an inactive array holding a spare.
MDSTAT = """Personalities : [raid0] [raid1]
md127 : active raid0 nvme1n1[1] nvme0n1[0]
      7813772288 blocks super 1.2 512k chunks

md1 : active (auto-read-only) raid1 sdb1[1] sda1[0]
      976630464 blocks super 1.2 [2/2] [UU]

md2 : inactive sdc[0](S)
      976631512 blocks super 1.2

unused devices: <none>
"""


def test_mdstat():
    arrays = parse_mdstat(MDSTAT)
    assert [(a.name, a.level, a.devices, a.active) for a in arrays] == [
        ("md127", "raid0", ["nvme1n1", "nvme0n1"], True),
        ("md1", "raid1", ["sdb1", "sda1"], True),
        ("md2", None, ["sdc"], False),
    ]


def test_network_fstype_table():
    for fstype in (
        "nfs",
        "nfs4",
        "cifs",
        "lustre",
        "beegfs",
        "gpfs",
        "ceph",
        "fuse.juicefs",
        "fuse.gcsfuse",
        "fuse.goofys",
    ):
        assert is_network_fs(fstype), fstype
    for fstype in ("ext4", "xfs", "tmpfs", "overlay", "fuse.lxcfs", None):
        assert not is_network_fs(fstype), fstype


def test_live_machine():
    st_ = collect_storage(LiveHost())
    root = next(m for m in st_.mounts if m.mountpoint == "/")
    assert root.total_bytes and root.free_bytes is not None and root.free_bytes <= root.total_bytes
    assert st_.shm_bytes and st_.shm_bytes > 0
    assert st_.block_devices


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=300))
def test_garbage_never_raises(text):
    parse_df(text)
    parse_mdstat(text)
    parse_proc_mounts(text)
    host = FakeHost(
        files={"/proc/mounts": text, "/proc/mdstat": text, "/sys/block/x/size": text},
        commands={"findmnt-J": text, "df-P-B1": text, "lsblk-J": text},
    )
    assert_every_none_is_explained(collect_storage(host))


FINDMNT_LSBLK_KEYS = [
    "filesystems",
    "children",
    "target",
    "fstype",
    "blockdevices",
    "name",
    "type",
    "size",
    "rota",
]


@settings(max_examples=40, deadline=None)
@given(json_shaped(FINDMNT_LSBLK_KEYS))
def test_json_of_any_shape_never_raises(data):
    flatten_findmnt(data)
    parse_lsblk(data)
