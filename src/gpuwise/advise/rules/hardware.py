"""Hardware rules beyond GPU health: discovery, PCIe links, topology/NUMA and instance sizing.
Sources: REFERENCE §5 (PCIe link, NUMA affinity), §6 #1/#11, §1 priority lists."""

from __future__ import annotations

from gpuwise.advise.controls import CLOUD_FIRMWARE, CLOUD_INSTANCE_SIZE, provider_owned
from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.finding import Controllable, ExpectedGain
from gpuwise.advise.rules._links import (
    DCGM_DIAG,
    MLE_NETWORK,
    MLE_PERFORMANCE,
    NCCL_ENV,
    NVML_CLOCK_EVENTS,
    TORCH_TUNING,
)
from gpuwise.advise.rules._load import gpu_load
from gpuwise.advise.rules._util import (
    gpus,
    total_gpu_memory_bytes,
)
from gpuwise.facts.fabric import port_roles
from gpuwise.i18n import N_, msg


@rule(
    id="gpu.none_found",
    layer="hardware",
    title=N_("No NVIDIA GPU found"),
    source=f"heuristic: a machine without GPUs is a normal case; the GPU checks need a GPU to read (DCGM diagnostics, {DCGM_DIAG})",
    priority="low",
)
def none_found(ctx: RuleContext):
    if ctx.facts.gpus:
        return None
    probe = ctx.facts.gpu_probe
    topo = ctx.facts.topology
    if topo.gpu_names or topo.nvlinks:
        # Topology or NVLink output without the per-GPU report: the GPUs exist, their details were
        # not captured.
        seen = topo.gpu_names or [f"GPU{g.gpu_index}" for g in topo.nvlinks or []]
        return ctx.finding(
            "info",
            [("gpus", []), ("topology.gpu_names", seen), ("gpu_probe.notes", probe.notes)],
            msg(
                "The capture shows GPUs in the topology/NVLink output but has no per-GPU report, so "
                "health checks (ECC, persistence, PCIe links, throttling, MIG) could not run. Capture "
                "the node with `gpuwise capture` (it records NVML and `nvidia-smi -q -x`)."
            ),
            title=msg("GPU details not captured (only topology/NVLink output)"),
            commands=["gpuwise capture -o node.tar.gz", "nvidia-smi -q -x > nvidia-smi-q-x.xml"],
        )
    evidence = [("gpu_probe.source", probe.source), ("gpus", [])]
    if probe.error:
        evidence.append(("gpu_probe.error", probe.error))
    return ctx.finding(
        "info",
        evidence,
        msg(
            "No NVIDIA GPU was visible ({error}). Host checks (shared memory, memlock, swap, CPU "
            "governor, NUMA balancing, storage, network, containers) still ran. On a GPU node gpuwise "
            "also checks PCIe link width and generation, persistence, ECC, retired pages and row "
            "remaps, throttling, MIG, NVLink and NVSwitch Fabric Manager, GPU/NIC NUMA placement, RDMA "
            "and NCCL settings, driver/CUDA/torch versions and monitoring agents. If this node should "
            "have GPUs, install the NVIDIA driver and check `nvidia-smi`."
        ).format(error=probe.error or msg("no driver or no device")),
        commands=["nvidia-smi", "lspci | grep -i nvidia"],
        controllable=Controllable(
            can="yes",
            reason=msg(
                "install the driver, or run doctor on the GPU node (or on its capture: gpuwise capture "
                "there, gpuwise doctor --from here)"
            ),
        ),
    )


@rule(
    id="gpu.probe_incomplete",
    layer="hardware",
    title=N_("Fewer GPUs described than attached"),
    source="nvidia-smi 'Attached GPUs' versus the GPU entries it printed: a GPU missing from the list is reported, never hidden",
    priority="low",
)
def probe_incomplete(ctx: RuleContext):
    attached = ctx.facts.gpu_probe.attached_gpus
    if attached is None or attached <= len(ctx.facts.gpus):
        return None
    return ctx.finding(
        "info",
        [("gpu_probe.attached_gpus", attached), ("gpus.count", len(ctx.facts.gpus))],
        msg(
            "Checks ran only on the GPUs described. Re-capture with the full `nvidia-smi -q -x` "
            "output to judge all of them."
        ),
        commands=["nvidia-smi -q -x > nvidia-smi-q-x.txt"],
    )


@rule(
    id="pcie.width_below_max",
    layer="hardware",
    title=N_("GPU PCIe link is narrower than its maximum"),
    source=f"DCGM diagnostics PCIe test (min_pci_width), {DCGM_DIAG}: width does not drop at idle, so a narrow link is a slot, riser or BIOS problem",
    priority={"cloud": "medium", "onprem": "high"},
    controllable=CLOUD_FIRMWARE,
    gain=ExpectedGain(
        text=N_("host<->GPU bandwidth scales with lanes: x8 is half of x16 (PCIe4 x16 31 GB/s)"),
        source=f"PCIe x16 per-direction bandwidth by generation (ml-engineering network, {MLE_NETWORK})",
    ),
)
def pcie_width(ctx: RuleContext):
    evidence, checked = [], []
    for p, g in gpus(ctx.facts):
        cur, mx = g.pcie.width_current, g.pcie.width_max
        if cur is None or mx is None:
            continue
        checked.append(p)
        if cur < mx:
            evidence.append((f"{p}.pcie.width_current/width_max", f"x{cur} / x{mx}"))
    if not evidence and not checked:
        return None
    if not evidence:
        return ctx.passed(
            [(f"{checked[0]}.pcie.width_current", "= width_max")], msg("GPU PCIe links run at full width")
        )
    return ctx.finding(
        "warn",
        evidence,
        msg(
            "A GPU link running below its maximum width has proportionally less host bandwidth (data "
            "loading, checkpoints, NCCL over PCIe). Reseat the card or riser, use a full x16 slot, "
            "and check the BIOS bifurcation settings. (Small consumer boards share lanes between "
            "slots by design.)"
        ),
        commands=[
            "nvidia-smi --query-gpu=index,pcie.link.width.current,pcie.link.width.max --format=csv",
            "sudo lspci -vvv | grep -E 'LnkCap|LnkSta'",
            "sudo dmesg | grep -i 'limited by'",
        ],
    )


@rule(
    id="pcie.gen_below_max",
    layer="hardware",
    title=N_("GPU PCIe link runs below its maximum generation under load"),
    source=f"DCGM diagnostics PCIe test (min_pci_generation), {DCGM_DIAG}; links downshift their generation at idle (NVML 'GPU Idle', {NVML_CLOCK_EVENTS})",
    priority={"cloud": "medium", "onprem": "high"},
    controllable=CLOUD_FIRMWARE,
    gain=ExpectedGain(
        text=N_("each PCIe generation doubles per-lane bandwidth (PCIe4 x16 31 GB/s, PCIe5 x16 63 GB/s)"),
        source=f"PCIe x16 per-direction bandwidth by generation (ml-engineering network, {MLE_NETWORK})",
    ),
)
def pcie_gen(ctx: RuleContext):
    busy, unsure = [], []
    for p, g in gpus(ctx.facts):
        cur, mx = g.pcie.gen_current, g.pcie.gen_max
        if cur is None or mx is None or cur >= mx:
            continue
        # Links downshift their generation at idle (normal power saving): judge only a GPU the
        # evidence says is busy; when the evidence conflicts, say so instead of warning.
        load = gpu_load(p, g, ctx.t("gpu_load"))
        link = (f"{p}.pcie.gen_current/gen_max", f"Gen{cur} / Gen{mx}")
        if load.state == "busy":
            busy += [link, *load.evidence()]
        elif load.state == "conflicting":
            unsure += [link, *load.evidence()]
    recheck = [
        "nvidia-smi -q -d PERFORMANCE   # while a job runs: the link should show its maximum generation",
        "gpuwise bench --only host-device   # loads the link, then read gen_current again",
    ]
    if busy:
        return ctx.finding(
            "warn",
            busy,
            msg(
                "Under load the link should train at its maximum generation. Check the BIOS PCIe speed "
                "setting (Auto or the highest Gen), risers and retimers, and `dmesg` for 'limited by' "
                "messages; re-check while a job runs."
            ),
            commands=[
                "nvidia-smi --query-gpu=index,pcie.link.gen.current,pcie.link.gen.max --format=csv",
                "sudo dmesg | grep -i 'limited by'",
            ],
        )
    if unsure:
        return ctx.finding(
            "info",
            unsure,
            msg(
                "The link runs below its maximum generation, but the evidence disagrees on whether the "
                "GPU was busy (a downshift at idle is normal power saving). Re-check while the link is "
                "loaded."
            ),
            commands=recheck,
            title=msg("GPU PCIe link below its maximum generation; load state unclear"),
            priority="low",
        )
    return None


@rule(
    id="topo.gpu_nic_numa",
    layer="hardware",
    title=N_("GPUs and NICs sit on different NUMA nodes"),
    source=f"NCCL environment variables, NCCL_NET_GDR_LEVEL (PIX/PXB/PHB/SYS distances), {NCCL_ENV}; ml-engineering, 'NUMA affinity', {MLE_PERFORMANCE}",
    priority={"cloud": "low", "onprem": "high"},
    controllable=provider_owned(
        Controllable(
            can="no",
            reason=N_("PCIe placement is fixed by the host"),
            alternative=N_(
                "give NCCL the provider's topology file (NCCL_TOPO_FILE) and pick instance types "
                "documented as GPU/NIC-affine"
            ),
        )
    ),
)
def gpu_nic_numa(ctx: RuleContext):
    topo = ctx.facts.topology
    if not topo.gpu_nic_links or not topo.nic_names:
        return None
    roles = port_roles(ctx.facts)
    compute = {dev for (dev, _port), role in roles.items() if role.compute}
    # only compute-fabric NICs count: a management NIC on the GPU's socket carries no NCCL traffic
    cols = [k for k, n in enumerate(topo.nic_names) if topo.nic_devices.get(n, n) in compute]
    if not cols:  # no role known for the matrix's NICs (other names, no RDMA facts): judge them all
        cols = list(range(len(topo.nic_names)))
    far = []
    for i, full_row in enumerate(topo.gpu_nic_links):
        row = [full_row[k] for k in cols if k < len(full_row)]
        if row and all(c == "SYS" for c in row):
            name = topo.gpu_names[i] if i < len(topo.gpu_names) else f"GPU{i}"
            far.append((f"topology.gpu_nic_links[{name}]", row))
    if not far:
        return ctx.passed(
            [("topology.gpu_nic_links", "each GPU has a NIC closer than SYS")],
            msg("every GPU has a NIC on its own NUMA node"),
        )
    nics = [topo.nic_devices.get(n, n) for n in topo.nic_names]
    return ctx.finding(
        "warn",
        far + [("topology.nic_names", nics)],
        msg(
            "These GPUs reach every NIC only across the CPU interconnect (SYS), which caps GPUDirect "
            "RDMA and adds latency. Put a NIC under the same PCIe switch or socket as each GPU pair, "
            "or bind ranks so each GPU uses its nearest NIC."
        ),
        commands=["nvidia-smi topo -m"],
    )


@rule(
    id="topo.gpu_p2p_sys",
    layer="hardware",
    title=N_("GPU pairs talk across CPU sockets without NVLink"),
    source=f"NCCL environment variables, NCCL_P2P_LEVEL: SYS paths cross the CPU interconnect, the slowest P2P route, {NCCL_ENV}",
    priority={"cloud": "low", "onprem": "medium"},
    controllable=provider_owned(
        Controllable(
            can="no",
            reason=N_("GPU placement is fixed by the instance"),
            alternative=N_("choose an NVLink/NVSwitch instance family for multi-GPU training"),
        )
    ),
)
def gpu_p2p_sys(ctx: RuleContext):
    links = ctx.facts.topology.gpu_links
    if not links or len(links) < 2:
        return None
    names = ctx.facts.topology.gpu_names
    pairs = []
    for i, row in enumerate(links):
        for j, c in enumerate(row):
            if j > i and c == "SYS":
                pairs.append(f"{names[i] if i < len(names) else i}-{names[j] if j < len(names) else j}")
    if not pairs:
        return None
    return ctx.finding(
        "info",
        [("topology.gpu_links (SYS pairs)", pairs)],
        msg(
            "Traffic between these GPUs crosses the CPU interconnect. Keep tightly coupled ranks "
            "(tensor parallel) on GPUs that share a switch or NVLink."
        ),
        commands=["nvidia-smi topo -m"],
    )


@rule(
    id="cpu.numa_binding",
    layer="hardware",
    title=N_("Multi-socket host: bind each rank to its GPU's NUMA node"),
    source=f"ml-engineering, 'NUMA affinity' ({MLE_PERFORMANCE}); PyTorch Performance Tuning Guide, 'Utilize Non-Uniform Memory Access (NUMA) Controls' ({TORCH_TUNING})",
    priority={"cloud": "low", "onprem": "medium"},
)
def numa_binding(ctx: RuleContext):
    nodes = ctx.facts.cpu.numa_nodes
    if not ctx.facts.gpus or not nodes or nodes < 2:
        return None
    evidence = [("cpu.numa_nodes", nodes)]
    if ctx.facts.topology.gpu_numa_affinity:
        evidence.append(("topology.gpu_numa_affinity", ctx.facts.topology.gpu_numa_affinity))
    return ctx.finding(
        "info",
        evidence,
        msg(
            "With several NUMA nodes, ranks that run on the far socket pay cross-socket memory "
            "traffic and straggle. Bind each rank's CPUs and memory to its GPU's NUMA node."
        ),
        commands=[
            "numactl --cpunodebind=<node> --membind=<node> python train.py",
            "torchrun --nproc-per-node=<gpus> ... (with per-rank numactl or srun --cpu-bind)",
        ],
        gain=ExpectedGain(
            text=msg("less cross-socket traffic; fewer stragglers"),
            source=f"PyTorch Performance Tuning Guide, NUMA controls, {TORCH_TUNING}",
        ),
    )


@rule(
    id="cpu.cores_per_gpu_low",
    layer="hardware",
    title=N_("Few CPU threads per GPU for data loading"),
    source=f"heuristic: DataLoader workers (2, 4, 8 ... up to the cores per GPU) need cores beside the training process (PyTorch Performance Tuning Guide, {TORCH_TUNING})",
    priority={"cloud": "high", "onprem": "medium"},
    controllable=CLOUD_INSTANCE_SIZE,
)
def cores_per_gpu(ctx: RuleContext):
    n_gpu, threads = len(ctx.facts.gpus), ctx.facts.cpu.threads
    if not n_gpu or not threads:
        return None
    per = threads / n_gpu
    minimum = ctx.t("cpu_threads_per_gpu_min")
    ev = [("cpu.threads", threads), ("gpus.count", n_gpu)]
    if per >= minimum:
        return ctx.passed(ev, msg("{per:g} CPU threads per GPU").format(per=per))
    return ctx.finding(
        "warn",
        ev,
        msg(
            "{per:g} logical CPUs per GPU leaves little room for DataLoader workers (and "
            "decoding/augmentation); input-bound steps show up as low GPU utilisation."
        ).format(per=per),
    )


@rule(
    id="memory.host_ram_small",
    layer="hardware",
    title=N_("Host RAM is smaller than the GPUs' total memory"),
    source="heuristic (thresholds.yaml host_ram_per_gpu_memory_min): checkpoints, pinned buffers and optimizer offload are staged in host RAM",
    priority={"cloud": "high", "onprem": "medium"},
    controllable=CLOUD_INSTANCE_SIZE,
)
def host_ram(ctx: RuleContext):
    total_gpu = total_gpu_memory_bytes(ctx.facts)
    ram = ctx.facts.memory.total_bytes
    if not total_gpu or not ram:
        return None
    ratio = ram / total_gpu
    ev = [("memory.total_bytes", ram), ("gpus[*].memory_total_bytes (sum)", total_gpu)]
    if ratio >= ctx.t("host_ram_per_gpu_memory_min"):
        return ctx.passed(ev, msg("host RAM is {ratio:.1f}x total GPU memory").format(ratio=ratio))
    return ctx.finding(
        "warn",
        ev,
        msg(
            "Host RAM is {ratio:.2f}x the total GPU memory. Checkpoint saving/loading, pinned-memory "
            "data loading and optimizer/CPU offload all stage data in host RAM; expect host OOMs or "
            "swapping with large models."
        ).format(ratio=ratio),
    )
