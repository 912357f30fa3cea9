"""Measurement rules: a benchmark well below the typically achievable fraction of its peak.
Sources: REFERENCE §3 (MAMF, DCGM 0.75x pass thresholds, nvbandwidth, nccl-tests busbw)."""

from __future__ import annotations

from gpuwise.advise.engine import Rule, RuleContext, rule
from gpuwise.advise.finding import ExpectedGain
from gpuwise.advise.rules._links import DCGM_DIAG, MLE_ACCELERATOR, TORCH_TUNING
from gpuwise.documents.bench import Measurement
from gpuwise.i18n import N_, joined, msg
from gpuwise.layers import Layer

_CHECKS: tuple[tuple[str, str, Layer, str, str], ...] = (
    # (rule id, bench layer, finding layer, what, what to check)
    (
        "bench.compute_low",
        "compute",
        "hardware",
        N_("Matmul throughput"),
        N_(
            "Check clocks and throttle reasons under load (`nvidia-smi -q -d PERFORMANCE`), power limits, "
            "and that the benchmark ran alone on the GPU."
        ),
    ),
    (
        "bench.memory_low",
        "memory",
        "hardware",
        N_("GPU memory bandwidth"),
        N_(
            "Check memory clocks, ECC/row-remap state and throttling; compare with another GPU of the same model."
        ),
    ),
    (
        "bench.host_device_low",
        "host-device",
        "hardware",
        N_("Host<->GPU (PCIe) bandwidth"),
        N_(
            "Check the PCIe link width/generation under load, NUMA placement of the pinned buffer, "
            "and ACS/IOMMU."
        ),
    ),
    (
        "bench.gpu_gpu_low",
        "gpu-gpu",
        "hardware",
        N_("GPU-to-GPU bandwidth"),
        N_("Check NVLink link state (`nvidia-smi nvlink -s`), P2P support, ACS and IOMMU settings."),
    ),
    (
        "bench.collective_low",
        "collective",
        "network",
        N_("Collective bus bandwidth (busbw)"),
        N_(
            "Check that NCCL uses the expected transport (NCCL_DEBUG=INFO: NET/IB vs NET/Socket, NVLS), "
            "leftover NCCL debugging variables, and message sizes >= 1 GiB for the plateau."
        ),
    ),
)


POWER_BOUND_LAYERS = ("compute", "memory")  # a power cap lowers the SM (and memory) clocks these depend on


def _achievable_percent(ctx: RuleContext, m: Measurement) -> tuple[float | None, str]:
    if m.percent_of_achievable is not None:
        return m.percent_of_achievable, msg("{fraction} of peak (catalog)").format(
            fraction=m.achievable_fraction or "?"
        )
    if m.percent_of_peak is None:
        return None, ""
    fraction = ctx.t("default_achievable_fraction").get(m.layer)
    if not fraction:
        return None, ""
    return m.percent_of_peak / fraction, msg("{fraction} of peak (typical, thresholds.yaml)").format(
        fraction=fraction
    )


def _make(rule_id: str, bench_layer: str, layer: Layer, what: str, advice: str) -> Rule:
    @rule(
        id=rule_id,
        layer=layer,
        title=N_("{what} is well below what this hardware typically achieves").format(what=what),
        source=f"achievable fractions of peak measured on good machines (ml-engineering MAMF and bandwidth tables, {MLE_ACCELERATOR}); DCGM diagnostics pass marks are 0.75x its reference values ({DCGM_DIAG})",
        priority="high",
        needs_bench=True,
    )
    def check(ctx: RuleContext):
        what_here, advice_here = msg(what), msg(advice)
        title = msg("{what} is well below what this hardware typically achieves").format(what=what_here)
        warn, fail = (
            ctx.t("measurement_percent_of_achievable_warn"),
            ctx.t("measurement_percent_of_achievable_fail"),
        )
        low, limited, seen, status = [], [], [], "warn"
        for m in ctx.bench.results:
            if m.layer != bench_layer or m.status != "ok" or m.value is None:
                continue
            if m.params.get("host_memory") == "pageable":
                continue  # pageable copies are staged through a CPU memcpy: judged by bench.pin_memory_gain
            if "cuda" not in (m.device or ""):
                continue  # CPU paths: derived CPU peaks, and the typical fractions and advice here are GPU ones

            pct, basis = _achievable_percent(ctx, m)
            if pct is None:
                continue
            seen.append(m.name)
            if pct >= warn:
                continue
            row = (
                f"bench:{m.name}",
                msg(
                    "{value:g} {unit} = {percent} of peak {peak:g} ({peak_source}); "
                    "{achievable} of achievable ({basis})"
                ).format(
                    value=m.value,
                    unit=m.unit,
                    percent=f"{m.percent_of_peak:.1f}%",  # "%" outside the msgid: see report/views/bench.py
                    peak=m.peak,
                    peak_source=m.peak_source.text if m.peak_source else msg("peak"),
                    achievable=f"{pct:.0f}%",
                    basis=basis,
                ),
            )
            power = _power_limited(ctx, m) if bench_layer in POWER_BOUND_LAYERS else []
            if power:
                limited += [row, *power]
                continue
            low.append(row)
            if pct < fail:
                status = "fail"
        if not low and not limited and not seen:
            return None
        if low:
            return ctx.finding(
                status,
                low + limited,
                msg("{what} is below the typical achievable fraction. {advice}").format(
                    what=what_here, advice=advice_here
                ),
                title=title,
            )
        if limited:
            return ctx.finding(
                "info",
                limited,
                msg(
                    "{what} is below the typical fraction because the GPU ran at its power limit: the SM "
                    "clock during the run was below its maximum, or the power cap was active. That is the "
                    "sustained rate this power limit allows, not a fault (a short burst from idle runs "
                    "faster)."
                ).format(what=what_here),
                title=msg("{what} is power-limited, as expected at this power limit").format(what=what_here),
                priority="low",
            )
        evidence = [(f"bench:{n}", msg("within typical achievable range")) for n in seen[:3]]
        return ctx.passed(
            evidence, msg("{what} is within the typical achievable range").format(what=what_here)
        )

    return check


def _power_limited(ctx: RuleContext, m: Measurement) -> list[tuple[str, object]]:
    """Evidence that the GPU of `m` ran power-limited: its SM clock right after the run well below the
    maximum the facts report, or the facts' clock-event reasons showing the software power cap."""
    device = m.device or ""
    index = int(device.split(":")[1]) if device.startswith("cuda:") and device[5:].isdigit() else 0
    if index >= len(ctx.facts.gpus):
        return []
    g = ctx.facts.gpus[index]
    evidence: list[tuple[str, object]] = []
    clock = (m.extra.get("clocks_after") or {}).get(f"gpu{index}_sm_mhz")
    below = ctx.t("power_limited_clock_fraction")
    if isinstance(clock, (int, float)) and g.sm_clock_max_mhz and clock < below * g.sm_clock_max_mhz:
        evidence.append(
            (
                f"bench:{m.name}.clocks_after.gpu{index}_sm_mhz",
                msg("{clock} of {max_mhz} MHz max").format(clock=clock, max_mhz=g.sm_clock_max_mhz),
            )
        )
    if "sw_power_cap" in (g.clock_event_reasons or []):
        evidence.append((f"gpus[{index}].clock_event_reasons", g.clock_event_reasons))
    return evidence


BELOW_ACHIEVABLE = tuple(_make(*row) for row in _CHECKS)  # the registry collects tuples of rules too


@rule(
    id="bench.not_measured",
    layer="hardware",
    title=N_("Some benchmarks failed, were invalid or lacked their tool"),
    source=f"heuristic: a benchmark that failed, was skipped or measured above 100% of peak is no evidence either way (timing as in ml-engineering's mamf-finder, {MLE_ACCELERATOR})",
    priority="low",
    needs_bench=True,
)
def not_measured(ctx: RuleContext):
    bad = [
        (f"bench:{m.name}", f"{m.status}: {m.reason or ''}".strip())
        for m in ctx.bench.results
        if m.status in ("failed", "invalid") or m.missing_tool
    ]
    if not bad:
        return None
    tools = sorted({m.missing_tool for m in ctx.bench.results if m.missing_tool})
    advice = msg("These layers were not judged. Fix the reason shown and re-run the benchmark.")
    if tools:
        advice += " " + msg(
            "{tools} is not installed, so its layer was skipped: install it (the line after 'To fix') "
            "and re-run."
        ).format(tools=joined(", ", tools))
    return ctx.finding(
        "info",
        bad,
        advice,
        commands=["gpuwise bench --quick --save bench.json"],
    )


@rule(
    id="bench.pin_memory_gain",
    layer="framework",
    title=N_("Pinned host memory moves data to the GPU much faster here"),
    source=f"PyTorch Performance Tuning Guide, 'Enable asynchronous data loading' (pin_memory=True plus non_blocking copies), {TORCH_TUNING}",
    priority="medium",
    needs_bench=True,
    gain=ExpectedGain(
        text=N_("the measured pinned/pageable H2D ratio on this machine"), source="gpuwise bench host-device"
    ),
)
def pin_memory_gain(ctx: RuleContext):
    # Pair by params, not by name: `bench --full` measures every GPU and names them h2d_pinned_gpu<N>.
    copies: dict[tuple[str | None, str], Measurement] = {}
    for m in ctx.bench.results:
        if m.layer == "host-device" and m.status == "ok" and m.value and m.params.get("direction") == "h2d":
            copies.setdefault((m.device, m.params.get("host_memory")), m)
    pairs = [
        (m, copies.get((device, "pageable"))) for (device, memory), m in copies.items() if memory == "pinned"
    ]
    pinned, pageable = next(((a, b) for a, b in pairs if b is not None), (None, None))
    if pinned is None or pageable is None:
        return None
    ratio = pinned.value / pageable.value
    evidence = [
        (f"bench:{pinned.name}", f"{pinned.value:.3g} {pinned.unit}"),
        (f"bench:{pageable.name}", f"{pageable.value:.3g} {pageable.unit}"),
    ]
    if ratio < ctx.t("pin_memory_ratio_info"):
        return ctx.passed(
            evidence,
            msg("pinned and pageable host->GPU copies are close here ({ratio:.1f}x)").format(ratio=ratio),
        )
    return ctx.finding(
        "info",
        evidence,
        msg(
            "Host->GPU copies from pinned memory ran {ratio:.1f}x faster than from pageable memory "
            "on this machine. Load batches with pin_memory=True and copy them with non_blocking=True "
            "so the copy overlaps compute."
        ).format(ratio=ratio),
        config=["DataLoader(ds, ..., pin_memory=True)", "batch = batch.to('cuda', non_blocking=True)"],
    )
