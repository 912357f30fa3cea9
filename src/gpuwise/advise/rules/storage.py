"""Storage rules (layer: storage): /dev/shm, data on network storage, local NVMe, NVMe RAID.
Sources: REFERENCE §1 (storage IOPS claims; cloud-high fast disks; on-prem-high NVMe RAID0), §5, §6 #4/#6."""

from __future__ import annotations

from gpuwise.advise.controls import CLOUD_STORAGE
from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.finding import ExpectedGain
from gpuwise.advise.rules._links import MLE_STORAGE, NCCL_TROUBLESHOOTING
from gpuwise.advise.rules._util import in_container
from gpuwise.advise.rules._util import sentences as _sentences
from gpuwise.i18n import N_, joined, msg

_SYSTEM_MOUNTS = ("/proc", "/sys", "/dev", "/run")


def _mount_of(path: str | None, mounts: list):
    """The mount holding `path` (the longest mountpoint that contains it), or None."""
    if not path or not path.startswith("/"):
        return None
    holding = [m for m in mounts if path == m.mountpoint or path.startswith(m.mountpoint.rstrip("/") + "/")]
    return max(holding, key=lambda m: len(m.mountpoint), default=None)


def _network_mounts(ctx: RuleContext):
    # Mount.network comes from the storage facts' own table (facts/data/network_fstypes.csv).
    return [m for m in ctx.facts.storage.mounts if m.network and not m.mountpoint.startswith(_SYSTEM_MOUNTS)]


@rule(
    id="storage.shm_small",
    layer="storage",
    title=N_("/dev/shm is smaller than 1 GB"),
    source=f"NCCL Troubleshooting, 'Sharing Data' (>= 1 GB /dev/shm), {NCCL_TROUBLESHOOTING}",
    priority="high",
    references=(NCCL_TROUBLESHOOTING,),
)
def shm_small(ctx: RuleContext):
    shm = ctx.facts.storage.shm_bytes
    if shm is None or in_container(
        ctx.facts
    ):  # containers: isolation.container_shm says it, with container commands
        return None
    minimum = ctx.t("shm_min_bytes")
    if shm >= minimum:
        return ctx.passed([("storage.shm_bytes", shm)], msg("/dev/shm is at least 1 GB"))
    return ctx.finding(
        "fail" if ctx.facts.gpus else "warn",
        [("storage.shm_bytes", shm)],
        msg(
            "DataLoader workers pass batches through /dev/shm and NCCL's SHM transport uses it; too "
            "small gives 'Bus error' crashes or silent fallbacks. Do not paper over it with "
            "NCCL_SHM_DISABLE."
        ),
        commands=["sudo mount -o remount,size=50% /dev/shm"],
        config=["tmpfs /dev/shm tmpfs defaults,size=50% 0 0   # /etc/fstab"],
    )


@rule(
    id="storage.data_on_network",
    layer="storage",
    title=N_("Network file systems mounted: training data may be read over the network"),
    source=f"ml-engineering storage: stage data to local NVMe; `import torch` on NFS took ~20 s, 5-10x local ({MLE_STORAGE})",
    priority={"cloud": "high", "onprem": "medium"},
    controllable=CLOUD_STORAGE,
    gain=ExpectedGain(
        text=N_("local NVMe is 2-5x faster than cloud storage for ImageNet-style reading"),
        source=f"ml-engineering storage, {MLE_STORAGE}",
    ),
)
def data_on_network(ctx: RuleContext):
    mounts = _network_mounts(ctx)
    if not mounts:
        return None
    evidence = [(f"storage.mounts[{m.mountpoint}].fstype", m.fstype) for m in mounts]
    status = "info"
    if ctx.bench is not None:
        low = ctx.t("storage_iops_low")
        for m in ctx.bench.results:
            # bench storage records the directory it measured as `device`; only a run on one of these
            # network mounts says anything about them (the default is the local temp dir).
            if (
                m.layer == "storage"
                and m.unit.upper() == "IOPS"
                and m.status == "ok"
                and m.value is not None
                and _mount_of(m.device, ctx.facts.storage.mounts) in mounts
            ):
                evidence.append((f"bench:{m.name}", m.value))
                if m.value < low:
                    status = "warn"
    return ctx.finding(
        status,
        evidence,
        _sentences(
            [
                msg(
                    "If the training data lives on these mounts, every epoch reads it over the network; "
                    "small random reads are IOPS bound. Stage the dataset to local NVMe (or RAM), shard "
                    "it into large record files, and prefetch."
                ),
                msg("The IOPS measured on them are low.")
                if status == "warn"
                else msg("Run `gpuwise doctor --bench quick` to measure."),
            ]
        ),
        commands=["rsync -a /mnt/dataset/ /local_nvme/dataset/"],
    )


@rule(
    id="storage.no_local_nvme",
    layer="storage",
    title=N_("No local NVMe drive on a GPU node"),
    source=f"heuristic: data-loading-heavy jobs want local NVMe or fast disks (ml-engineering storage, {MLE_STORAGE})",
    priority={"cloud": "high", "onprem": "medium"},
    controllable=CLOUD_STORAGE,
)
def no_local_nvme(ctx: RuleContext):
    st = ctx.facts.storage
    if not ctx.facts.gpus or not st.block_devices or any(b.nvme for b in st.block_devices):
        return None
    return ctx.finding(
        "info",
        [("storage.block_devices", [b.name for b in st.block_devices])],
        msg(
            "Without local NVMe, data loading and checkpointing depend on network or SATA disks. Add "
            "NVMe scratch (or choose an instance type with local NVMe) for datasets and checkpoints."
        ),
    )


@rule(
    id="storage.nvme_not_raided",
    layer="storage",
    title=N_("Several NVMe drives but no RAID0 across them"),
    source=f"heuristic: several local NVMe drives striped (RAID0) multiply read bandwidth and IOPS (ml-engineering storage, {MLE_STORAGE})",
    priority={"cloud": "medium", "onprem": "high"},
)
def nvme_not_raided(ctx: RuleContext):
    st = ctx.facts.storage
    nvme = [b.name for b in st.block_devices if b.nvme]
    if "md_arrays" in st.unknown:
        return None  # /proc/mdstat not read: cannot say there is no RAID
    if len(nvme) < 2 or any((a.level or "") == "raid0" and a.active is not False for a in st.md_arrays):
        return None
    return ctx.finding(
        "info",
        [("storage.block_devices (nvme)", nvme), ("storage.md_arrays", [a.name for a in st.md_arrays])],
        msg(
            "A scratch RAID0 across the NVMe drives multiplies read bandwidth and IOPS for datasets "
            "and checkpoints (keep the data reproducible elsewhere: RAID0 has no redundancy)."
        ),
        commands=[
            f"sudo mdadm --create /dev/md0 --level=0 --raid-devices={len(nvme)} "
            + joined(" ", (f"/dev/{n}" for n in nvme)),
            "sudo mkfs.xfs /dev/md0",
        ],
    )
