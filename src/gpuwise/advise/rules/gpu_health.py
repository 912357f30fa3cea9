"""GPU health and setup rules (layer: hardware): persistence, temperature, MIG, Fabric
Manager, NVLink, infoROM, unreadable or mixed GPUs. Memory errors are in gpu_memory.py, clock-event
reasons (throttling) in gpu_throttle.py.
Sources: REFERENCE §5 rows."""

from __future__ import annotations

from gpuwise.advise.controls import CLOUD_HARDWARE, cloud_only, provider_owned
from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.finding import Controllable, ExpectedGain
from gpuwise.advise.rules._evidence import gpu_model, has_nvlink
from gpuwise.advise.rules._links import (
    DCGM_DIAG,
    DRIVER_PERSISTENCE,
    FABRIC_MANAGER,
    MIG_GUIDE,
    MLE_NETWORK,
    MLE_PERFORMANCE,
    NVML_CLOCK_EVENTS,
)
from gpuwise.advise.rules._load import gpu_load
from gpuwise.advise.rules._util import gpus, in_container
from gpuwise.advise.rules._util import sentences as _sentences
from gpuwise.i18n import N_, joined, msg


@rule(
    id="gpu.persistence_off",
    layer="hardware",
    title=N_("GPU persistence mode is off"),
    source=f"NVIDIA Driver Persistence, 'Persistence Daemon', {DRIVER_PERSISTENCE}; DCGM diagnostics level 1, {DCGM_DIAG}",
    priority={"cloud": "medium", "onprem": "medium"},
    references=(DRIVER_PERSISTENCE,),
    gain=ExpectedGain(
        text=N_("removes the driver re-initialisation ('seconds') at the start of every CUDA process"),
        source=f"NVIDIA Driver Persistence, {DRIVER_PERSISTENCE}",
    ),
)
def persistence_off(ctx: RuleContext):
    known = [(p, g) for p, g in gpus(ctx.facts) if g.persistence_mode is not None]
    if not known:
        return None
    off = [(p, g) for p, g in known if g.persistence_mode is False]
    if not off:
        return ctx.passed(
            [(f"{p}.persistence_mode", True) for p, _gpu in known[:1]], msg("GPU persistence mode is on")
        )
    service = ctx.facts.software.services.get("nvidia-persistenced")
    evidence = [(f"{p}.persistence_mode", False) for p, _gpu in off]
    if service is not None:
        evidence.append(("software.services.nvidia-persistenced", service))
    return ctx.finding(
        "warn",
        evidence,
        msg(
            "{n_off} of {n_known} GPUs have persistence mode off, so every new CUDA process pays the "
            "driver initialisation. Run the persistence daemon (preferred over the legacy "
            "`nvidia-smi -pm 1`)."
        ).format(n_off=len(off), n_known=len(known)),
        commands=["sudo systemctl enable --now nvidia-persistenced", "nvidia-smi -q | grep -i persistence"],
        controllable=Controllable(
            can="yes",
            reason=msg("a driver daemon inside the OS (also in a cloud VM with root)"),
            alternative=msg("in a container without root, ask the host administrator"),
        )
        if ctx.env != "unknown"
        else None,
    )


@rule(
    id="gpu.temperature_high",
    layer="hardware",
    title=N_("GPU temperature is high"),
    source=f"heuristic (thresholds.yaml gpu_temperature_warn_c): sustained heat leads to thermal slowdown (NVML clocks event reasons, {NVML_CLOCK_EVENTS})",
    priority={"cloud": "low", "onprem": "high"},
    controllable=CLOUD_HARDWARE,
)
def temperature_high(ctx: RuleContext):
    limit = ctx.t("gpu_temperature_warn_c")
    hot = [
        (f"{p}.temperature_c", g.temperature_c)
        for p, g in gpus(ctx.facts)
        if g.temperature_c is not None and g.temperature_c >= limit
    ]
    if not hot:
        return None
    return ctx.finding(
        "warn",
        hot,
        msg(
            "GPUs at or above {limit} C are close to thermal slowdown. Check airflow, fan curves and "
            "inlet temperature."
        ).format(limit=limit),
        commands=["nvidia-smi -q -d TEMPERATURE"],
    )


@rule(
    id="gpu.mig_enabled",
    layer="hardware",
    title=N_("MIG is enabled on a GPU used for training"),
    source=f"heuristic: a training job wants the whole GPU; MIG slices it into isolated instances (NVIDIA MIG User Guide, {MIG_GUIDE})",
    priority={"cloud": "medium", "onprem": "high"},
    controllable=cloud_only(
        Controllable(
            can="partly",
            reason=N_(
                "MIG mode can be changed only with GPU admin rights; some cloud shapes are sold as MIG slices"
            ),
            alternative=N_("choose a full-GPU instance type for training"),
        )
    ),
    references=(MIG_GUIDE,),
)
def mig_enabled(ctx: RuleContext):
    on = [(f"{p}.mig_enabled", True) for p, g in gpus(ctx.facts) if g.mig_enabled]
    if not on:
        return None
    return ctx.finding(
        "warn",
        on,
        msg(
            "MIG splits each GPU into small instances: a training process sees only one slice (a "
            "fraction of the SMs and memory) and NVLink P2P is not available. Disable MIG on "
            "training nodes unless you train small models on purpose."
        ),
        commands=["sudo nvidia-smi -i <gpu> -mig 0", "sudo nvidia-smi -r -i <gpu>"],
    )


@rule(
    id="gpu.fabric_manager",
    layer="hardware",
    title=N_("NVSwitch fabric is not initialised (Fabric Manager)"),
    source=f"NVIDIA Fabric Manager User Guide (NVSwitch systems need it running; fabric state Completed), {FABRIC_MANAGER}index.html; DCGM diagnostics, {DCGM_DIAG}",
    priority="high",
    controllable=cloud_only(
        Controllable(
            can="partly",
            reason=N_(
                "Fabric Manager runs in the guest on full-node NVSwitch VMs; on partial shapes the "
                "provider runs it"
            ),
            alternative=N_("restart the instance, then report it to the provider"),
        )
    ),
    references=(FABRIC_MANAGER,),
)
def fabric_manager(ctx: RuleContext):
    ok_states = ctx.t("fabric_state_ok")
    bad = [
        (f"{p}.fabric_state", g.fabric_state)
        for p, g in gpus(ctx.facts)
        if g.fabric_state and g.fabric_state not in ok_states
    ]
    service = ctx.facts.software.services.get("nvidia-fabricmanager")
    if not bad:
        done = [
            (f"{p}.fabric_state", g.fabric_state) for p, g in gpus(ctx.facts) if g.fabric_state == "Completed"
        ]
        return ctx.passed(done[:1], msg("NVSwitch fabric is initialised")) if done else None
    evidence = bad + ([("software.services.nvidia-fabricmanager", service)] if service else [])
    return ctx.finding(
        "fail",
        evidence,
        msg(
            "On NVSwitch systems CUDA cannot use the GPUs until Fabric Manager has set up the "
            "fabric. Install the nvidia-fabricmanager package of exactly the driver's version and "
            "start it."
        ),
        commands=["sudo systemctl enable --now nvidia-fabricmanager", "nvidia-smi -q | grep -A2 -i fabric"],
    )


@rule(
    id="gpu.nvlink_inactive",
    layer="hardware",
    title=N_("NVLink links are inactive"),
    source=f"DCGM diagnostics level 1 NVLink checks, {DCGM_DIAG}; NVLink bandwidth figures assume every link up (ml-engineering, {MLE_NETWORK})",
    priority="high",
    controllable=CLOUD_HARDWARE,
    gain=ExpectedGain(
        text=N_(
            "each inactive link removes its share of GPU-to-GPU bandwidth (about 25 GB/s per NVLink2 "
            "link in the V100 capture)"
        ),
        source="nvidia-smi nvlink -s per-link speeds",
    ),
)
def nvlink_inactive(ctx: RuleContext):
    links = ctx.facts.topology.nvlinks
    if not links:
        return None
    evidence, total, inactive = [], 0, 0
    for gl in links:
        dead = [lk.link for lk in gl.links if not lk.active]
        total += len(gl.links)
        inactive += len(dead)
        # A GPU with every link down is reported the same way: it has NVLink hardware that is not working.
        if dead:
            evidence.append((f"topology.nvlinks[gpu {gl.gpu_index}].inactive_links", dead))
        elif gl.all_inactive and not gl.links and has_nvlink(gl.name or gpu_model(ctx.facts, gl.gpu_index)):
            # NVML: "Unable to retrieve NVLink information as all links are inActive" on a model that has
            # NVLink (catalog): every link of this GPU is down, not "not applicable"
            evidence.append((f"topology.nvlinks[gpu {gl.gpu_index}].all_inactive", gl.name or True))
            inactive += 1
    if not evidence:
        if total == 0:
            return None  # no NVLink to judge (no links listed, or a model without NVLink)
        return ctx.passed(
            [("topology.nvlinks.active_links", total)],
            msg("all {total} NVLink links are active").format(total=total),
        )
    down = [gl.gpu_index for gl in links if gl.all_inactive and not gl.links]
    text = msg(
        "{inactive} of {total} NVLink links are inactive, so GPU-to-GPU traffic on those pairs "
        "is slower or goes over PCIe. Reset the GPUs or reboot; if links stay down, run DCGM "
        "diagnostics and get the baseboard checked."
    ).format(inactive=inactive - len(down), total=total)
    if down:
        text = msg(
            "Every NVLink of GPU {gpus} is down (NVML: all links are inActive) although the model has NVLink: "
            "its GPU-to-GPU traffic goes over PCIe. Reset the GPU or reboot; if the links stay down, run DCGM "
            "diagnostics and get the baseboard or bridge checked."
        ).format(gpus=joined(", ", map(str, down)))
    return ctx.finding(
        "fail",
        evidence,
        text,
        commands=["nvidia-smi nvlink -s", "nvidia-smi topo -m", "dcgmi diag -r 2"],
    )


@rule(
    id="gpu.inforom_warning",
    layer="hardware",
    title=N_("nvidia-smi reports an infoROM problem"),
    source=f"nvidia-smi warning 'infoROM is corrupted'; DCGM diagnostics level 1 inforom check, {DCGM_DIAG}",
    priority={"cloud": "medium", "onprem": "high"},
    controllable=CLOUD_HARDWARE,
    references=(DCGM_DIAG,),
)
def inforom_warning(ctx: RuleContext):
    evidence = []
    for p, g in gpus(ctx.facts):
        for w in g.warnings:
            if "inforom" in w.lower():
                evidence.append((f"{p}.warnings", w))
    # nvidia-smi's own warning text (tool output, not a gpuwise message), also when it names no listed GPU
    evidence += [("gpu_probe.warnings", w) for w in ctx.facts.gpu_probe.warnings if "inforom" in w.lower()]
    if not evidence:
        return None
    return ctx.finding(
        "warn",
        evidence,
        msg(
            "A corrupted infoROM can hide ECC and page-retirement bookkeeping and makes the GPU fail "
            "DCGM checks. Run `dcgmi diag -r 1`; the fix is an infoROM/VBIOS reflash by the vendor "
            "(RMA on most systems)."
        ),
        commands=["nvidia-smi -q | grep -i -A6 inforom", "dcgmi diag -r 1"],
    )


@rule(
    id="gpu.unreadable",
    layer="hardware",
    title=N_("A GPU could not be read"),
    source="heuristic: one broken GPU is an explicit bad entry, never a crashed probe; an NVML handle failure usually means the GPU has fallen off the bus (check dmesg for Xid 79)",
    priority="high",
    controllable=CLOUD_HARDWARE,
)
def unreadable(ctx: RuleContext):
    bad = [(f"{p}.error", g.error) for p, g in gpus(ctx.facts) if g.error]
    if not bad:
        return None
    return ctx.finding(
        "fail",
        bad,
        msg(
            "The driver could not query this GPU, so jobs that use it fail. Look for Xid errors in "
            "the kernel log, reset the GPU or reboot; if it recurs, reseat or RMA it."
        ),
        commands=["sudo dmesg -T | grep -i xid", "nvidia-smi -q -i <gpu>", "sudo nvidia-smi -r -i <gpu>"],
    )


@rule(
    id="gpu.mixed_models",
    layer="hardware",
    title=N_("GPUs of different models in one node"),
    source=f"heuristic: in data-parallel training the slowest GPU sets the pace (stragglers; ml-engineering, {MLE_PERFORMANCE})",
    priority="medium",
)
def mixed_models(ctx: RuleContext):
    names = sorted({g.name for g in ctx.facts.gpus if g.name})
    if len(names) < 2:
        return None
    return ctx.finding(
        "warn",
        [("gpus[*].name", names)],
        msg(
            "Synchronous data parallel waits for the slowest GPU at every step. Train on GPUs of one "
            "model, e.g. with CUDA_VISIBLE_DEVICES."
        ),
        env={"CUDA_VISIBLE_DEVICES": "<same-model GPUs>"},
    )


@rule(
    id="gpu.driver_missing",
    layer="hardware",
    title=N_("NVIDIA GPUs are on the PCI bus but the driver does not answer for them"),
    source="NVML initialisation (https://docs.nvidia.com/deploy/nvml-api/group__nvmlInitializationAndCleanup.html): "
    "a GPU that lspci lists but NVML cannot open has no working driver, or has fallen off the bus",
    priority="high",
    controllable=provider_owned(
        Controllable(
            can="partly",
            reason=N_("the driver is in your image; a GPU that fell off the bus is the provider's"),
            alternative=N_(
                "use the provider's GPU image, or stop and start the instance to get another host"
            ),
        )
    ),
)
def driver_missing(ctx: RuleContext):
    probe = ctx.facts.gpu_probe
    on_bus = probe.pci_gpus or []
    if not on_bus:
        return None
    answering = [g for g in ctx.facts.gpus if g.error is None]
    evidence = [("gpu_probe.pci_gpus", on_bus), ("gpus.count", len(answering))]
    if probe.error:
        evidence.append(("gpu_probe.error", probe.error))
    if len(answering) >= len(on_bus):
        return ctx.passed(
            evidence[:2], msg("all {n_on_bus} NVIDIA GPUs on the PCI bus answer").format(n_on_bus=len(on_bus))
        )
    container = in_container(ctx.facts)
    if answering and container:
        return ctx.finding(
            "info",
            evidence,
            msg(
                "This container sees {n_answering} of the {n_on_bus} GPUs on the host's PCI bus, as a "
                "container given a subset of GPUs does."
            ).format(n_answering=len(answering), n_on_bus=len(on_bus)),
            priority="low",
        )
    parts = [
        msg("lspci lists {n_on_bus} NVIDIA GPUs but only {n_answering} answer the driver.").format(
            n_on_bus=len(on_bus), n_answering=len(answering)
        )
        if answering
        else msg("lspci lists {n_on_bus} NVIDIA GPUs but the driver answers for none of them.").format(
            n_on_bus=len(on_bus)
        ),
        msg(
            "A GPU node without working GPUs must not take jobs: check that the driver is loaded and "
            "matches the kernel, and look for Xid 79 (fallen off the bus) in the kernel log."
        ),
    ]
    if container:
        parts.append(
            msg("In a container, start it with the GPUs (`--gpus all` and the NVIDIA Container Toolkit).")
        )
    text = _sentences(parts)
    return ctx.finding(
        "fail",
        evidence,
        text,
        commands=["lsmod | grep nvidia", "nvidia-smi", "sudo dmesg | grep -iE 'NVRM|Xid'"],
    )


@rule(
    id="gpu.power_capped",
    layer="hardware",
    title=N_("GPU clocks are held at the power limit"),
    source=f"NVML clocks event reasons: SW Power Cap means the clocks were lowered to stay within the power limit ({NVML_CLOCK_EVENTS}); nvidia-smi -pl sets the limit (https://docs.nvidia.com/deploy/nvidia-smi/index.html)",
    priority={"cloud": "low", "onprem": "medium"},
    controllable=provider_owned(
        Controllable(
            can="partly",
            reason=N_(
                "root in the VM can usually set the limit up to the board's maximum; the maximum is the "
                "provider's"
            ),
            alternative=N_("choose an instance type whose GPUs run at the full board power"),
        )
    ),
    references=(NVML_CLOCK_EVENTS,),
)
def power_capped(ctx: RuleContext):
    tolerance = ctx.t("power_limit_below_default_fraction")
    lowered, at_cap, headroom = [], [], []
    for p, g in gpus(ctx.facts):
        if "sw_power_cap" not in (g.clock_event_reasons or []):
            continue
        limit, default, top = g.power_limit_watts, g.power_limit_default_watts, g.power_limit_max_watts
        idle = gpu_load(p, g, ctx.t("gpu_load")).state == "idle"
        limits = [(f"{p}.power_limit_watts", limit), (f"{p}.power_limit_default_watts", default)]
        limits.append((f"{p}.power_limit_max_watts", top))
        if limit is not None and default and limit < default * (1 - tolerance):
            lowered += limits  # someone set it below the board's default
        elif limit is not None and top and limit < top * (1 - tolerance) and not idle:
            lowered += limits  # capping real work while the board allows more
        else:
            at_cap += [(f"{p}.clock_event_reasons", g.clock_event_reasons)]
            at_cap += (
                [(f"{p}.power_draw_watts", g.power_draw_watts)] if g.power_draw_watts is not None else []
            )
            at_cap += [(f"{p}.load", msg("idle: the flag limits nothing now"))] if idle else []
            if limit is not None and top and limit < top * (1 - tolerance):
                headroom.append(f"sudo nvidia-smi -i {g.index if g.index is not None else 0} -pl {top:g}")
    if lowered:
        target = next((v for path, v in lowered if path.endswith("max_watts") and v), None)
        return ctx.finding(
            "warn",
            lowered,
            msg(
                "The power limit in force is below the board's default or maximum while it caps the "
                "clocks, so the GPU slows down earlier than it has to. Raise it unless the cap is "
                "deliberate (power budget, cooling), and check temperatures afterwards."
            ),
            commands=[
                f"sudo nvidia-smi -pl {target:g}" if target else "sudo nvidia-smi -pl <watts>",
                "nvidia-smi -q -d POWER,TEMPERATURE",
            ],
        )
    if not at_cap:
        return None
    parts = [
        msg(
            "The GPU is working at its power limit, as designed: a modern GPU lowers its clocks to stay "
            "within it (not a cooling or power-supply fault). Sustained throughput is what the limit allows."
        )
    ]
    if headroom:
        parts.append(msg("The board allows a higher limit if training turns out power-bound."))
    text = _sentences(parts)
    return ctx.finding(
        "info",
        at_cap,
        text,
        commands=headroom,
        priority="low",
        controllable=Controllable(can="yes", reason=msg("nothing to change unless the limit was lowered")),
    )


@rule(
    id="gpu.idle_busy_state",
    layer="hardware",
    title=N_("GPUs are busy during the probe"),
    source=f"NVML clocks event reasons: 'GPU Idle' means nothing runs and clocks and links drop, so several checks read differently under load ({NVML_CLOCK_EVENTS})",
    priority="low",
)
def gpus_busy(ctx: RuleContext):
    loads = [gpu_load(p, g, ctx.t("gpu_load")) for p, g in gpus(ctx.facts)]
    busy = [e for load in loads if load.state == "busy" for e in load.busy]
    if not busy:
        return None
    return ctx.finding(
        "info",
        busy,
        msg(
            "These GPUs were busy when the facts were taken (utilisation or compute processes); link "
            "generation and clocks are judged as under load. Run doctor again on an idle node to "
            "separate load effects from setup problems."
        ),
    )
