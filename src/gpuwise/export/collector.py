"""The prometheus-client Collector: one source read per scrape, dcgm-exporter names plus gpuwise_* metrics.

The DCGM_FI_* metrics carry dcgm-exporter's names and labels (gpu, UUID, pci_bus_id, device, modelName,
Hostname; https://github.com/NVIDIA/dcgm-exporter/blob/main/etc/default-counters.csv), so dashboards made
for it work unchanged, with dcgm-exporter's types: its counters are counters that keep their plain names
(exposition.ExactNameCounter). gpuwise_* metrics are in Prometheus base units (bytes, hertz, seconds,
watts, ratios; https://prometheus.io/docs/practices/naming/#base-units) and their counters end in
_total. A value the source did not report gives no sample, never a zero.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily
from prometheus_client.registry import Collector

from gpuwise.export import signals
from gpuwise.export.exposition import ExactNameCounter
from gpuwise.export.sample import GpuSample, Snapshot
from gpuwise.export.sources import Source
from gpuwise.facts.gpu_fields import CLOCK_EVENT_REASON_BITS

DCGM_LABELS = ["gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname"]

# (name, help, value from a GPU sample); help texts follow dcgm-exporter's default-counters.csv, and
# DCGM_COUNTERS are the ones it types counter. DCGM_FI_DEV_PCIE_TX/RX_THROUGHPUT stay gauges although
# the CSV says counter: the value is NVML's KB/s over a 20 ms window (nvmlDeviceGetPcieThroughput),
# a rate that goes up and down, not a running total.
DCGM_METRICS: list[tuple[str, str, Callable[[GpuSample], float | None]]] = [
    ("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", lambda g: g.sm_clock_mhz),
    ("DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz).", lambda g: g.mem_clock_mhz),
    ("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", lambda g: g.temperature_c),
    ("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", lambda g: g.power_w),
    (
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        "Total energy consumption since boot (in mJ).",
        lambda g: g.energy_mj,
    ),
    ("DCGM_FI_DEV_PCIE_TX_THROUGHPUT", "PCIe TX throughput (in KB/s) via NVML.", lambda g: g.pcie_tx_kbps),
    ("DCGM_FI_DEV_PCIE_RX_THROUGHPUT", "PCIe RX throughput (in KB/s) via NVML.", lambda g: g.pcie_rx_kbps),
    ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "Total number of PCIe retries.", lambda g: g.pcie_replay),
    ("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", lambda g: g.util_gpu_pct),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %).", lambda g: g.util_mem_pct),
    ("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", lambda g: g.xid_last),
    ("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", lambda g: g.fb_free_mib),
    ("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", lambda g: g.fb_used_mib),
    (
        "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
        "Total number of single-bit volatile ECC errors.",
        lambda g: g.ecc_sbe_volatile,
    ),
    (
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        "Total number of double-bit volatile ECC errors.",
        lambda g: g.ecc_dbe_volatile,
    ),
    (
        "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL",
        "Total number of single-bit persistent ECC errors.",
        lambda g: g.ecc_sbe_aggregate,
    ),
    (
        "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
        "Total number of double-bit persistent ECC errors.",
        lambda g: g.ecc_dbe_aggregate,
    ),
    (
        "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
        "Total number of NVLink bandwidth counters for all lanes (KiB sent and received).",
        lambda g: None if g.nvlink_tx_kib is None else g.nvlink_tx_kib + (g.nvlink_rx_kib or 0),
    ),
    (
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
        "Number of remapped rows for uncorrectable errors",
        lambda g: g.remapped_uncorrectable,
    ),
    (
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
        "Number of remapped rows for correctable errors",
        lambda g: g.remapped_correctable,
    ),
    (
        "DCGM_FI_DEV_ROW_REMAP_FAILURE",
        "Whether remapping of rows has failed",
        lambda g: None if g.remap_failure is None else float(g.remap_failure),
    ),
]

DCGM_COUNTERS = frozenset(
    {
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
        "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL",
        "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
        "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
    }
)

GPU_LABELS = ["gpu", "UUID", "modelName", "Hostname"]

# gpuwise's own per-GPU gauges, in base units: (name, unit, help, value from a GPU sample)
GPUWISE_METRICS: list[tuple[str, str, str, Callable[[GpuSample], float | None]]] = [
    ("gpuwise_power_limit_watts", "watts", "Enforced power limit.", lambda g: g.power_limit_w),
    (
        "gpuwise_sm_clock_max_hertz",
        "hertz",
        "Maximum SM clock.",
        lambda g: None if g.sm_clock_max_mhz is None else g.sm_clock_max_mhz * 1e6,
    ),
    (
        "gpuwise_memory_total_bytes",
        "bytes",
        "Framebuffer memory used + free (the driver's reserve excluded).",
        lambda g: None if g.fb_total_mib is None else g.fb_total_mib * 2**20,
    ),
    ("gpuwise_pcie_link_gen", "", "Current PCIe link generation.", lambda g: g.pcie_gen),
    (
        "gpuwise_pcie_link_gen_max",
        "",
        "Maximum PCIe link generation (GPU and slot).",
        lambda g: g.pcie_gen_max,
    ),
    ("gpuwise_pcie_link_width", "", "Current PCIe link width (lanes).", lambda g: g.pcie_width),
    ("gpuwise_pcie_link_width_max", "", "Maximum PCIe link width (lanes).", lambda g: g.pcie_width_max),
]


class GpuCollector(Collector):
    """`collect()` reads the source once and turns the reading into metric families."""

    def __init__(self, source: Source, job_labels: dict[str, str] | None = None) -> None:
        self.source = source
        self.config = signals.load_config()
        self.job_labels = dict(job_labels or {})  # added to every per-GPU series (--job-labels)
        self._lock = threading.Lock()
        self.reads = 0
        self.read_errors = 0

    def describe(self) -> list:
        return []  # no read at registration: the first scrape is the first read

    def collect(self) -> Iterator:
        started = time.perf_counter()
        try:
            snap = self.source.read()
        except Exception as exc:  # a source bug must cost one scrape, not the exporter
            snap = Snapshot(taken_at=time.time(), hostname="", error=f"{type(exc).__name__}: {exc}")
        took_s = time.perf_counter() - started
        with self._lock:
            self.reads += 1
            self.read_errors += bool(snap.error)
            reads, errors = self.reads, self.read_errors
        yield from metric_families(snap, self.config, self.job_labels)
        health = GaugeMetricFamily("gpuwise_exporter_read_ok", "1 if the last read of the GPUs worked.")
        health.add_metric([], 0.0 if snap.error else 1.0)
        yield health
        took = GaugeMetricFamily(
            "gpuwise_exporter_read_seconds", "Wall time of the last read of the GPUs.", unit="seconds"
        )
        took.add_metric([], took_s)
        yield took
        yield CounterMetricFamily(
            "gpuwise_exporter_reads_total", "Reads of the GPUs since start.", value=reads
        )
        yield CounterMetricFamily(
            "gpuwise_exporter_read_errors_total", "Reads of the GPUs that failed since start.", value=errors
        )


def metric_families(
    snap: Snapshot, config: signals.SignalConfig, job_labels: dict[str, str] | None = None
) -> Iterator:
    """Every family for one snapshot (none when the read failed: never stale data)."""
    if snap.error and not snap.gpus:
        return
    lb = SeriesLabels(snap.hostname, dict(job_labels or {}))
    for name, help_text, value_of in DCGM_METRICS:
        fam = (
            ExactNameCounter(name, help_text, lb.dcgm_names)
            if name in DCGM_COUNTERS
            else GaugeMetricFamily(name, help_text, labels=lb.dcgm_names)
        )
        for g in snap.gpus:
            value = value_of(g)
            if value is not None:
                fam.add_metric(lb.dcgm(g), float(value))
        yield fam
    for name, unit, help_text, value_of in GPUWISE_METRICS:
        fam = GaugeMetricFamily(name, help_text, labels=lb.gpu_names, unit=unit)
        for g in snap.gpus:
            value = value_of(g)
            if value is not None:
                fam.add_metric(lb.gpu(g), float(value))
        yield fam
    yield _info(snap, lb)
    yield _clock_reasons(snap, lb)
    yield from _processes(snap, lb)
    yield _signals(snap, config, lb)


@dataclass(frozen=True)
class SeriesLabels:
    """The labels of per-GPU series: dcgm-exporter's (or gpuwise's shorter set), then any job labels."""

    host: str
    job: dict[str, str]

    @property
    def dcgm_names(self) -> list[str]:
        return [*DCGM_LABELS, *self.job]

    @property
    def gpu_names(self) -> list[str]:
        return [*GPU_LABELS, *self.job]

    def dcgm(self, g: GpuSample) -> list[str]:
        ids = [str(g.index), g.uuid or "", g.pci_bus_id or "", f"nvidia{g.index}", g.name or "", self.host]
        return [*ids, *self.job.values()]

    def gpu(self, g: GpuSample) -> list[str]:
        return [str(g.index), g.uuid or "", g.name or "", self.host, *self.job.values()]


def _info(snap: Snapshot, lb: SeriesLabels) -> InfoMetricFamily:
    fam = InfoMetricFamily(
        "gpuwise_gpu",
        "Facts that matter for tuning: driver, CUDA, PCIe maximum link, environment kind.",
        labels=lb.gpu_names,
    )
    for g in snap.gpus:
        fam.add_metric(
            lb.gpu(g),
            {
                "driver_version": snap.driver_version or "",
                "cuda_version": snap.cuda_version or "",
                "pci_bus_id": g.pci_bus_id or "",
                "pcie_gen_max": "" if g.pcie_gen_max is None else str(g.pcie_gen_max),
                "pcie_width_max": "" if g.pcie_width_max is None else str(g.pcie_width_max),
                "environment": snap.environment,
            },
        )
    return fam


def _clock_reasons(snap: Snapshot, lb: SeriesLabels) -> GaugeMetricFamily:
    fam = GaugeMetricFamily(
        "gpuwise_clock_event_reason",
        "1 while NVML reports this clocks-event (throttle) reason active.",
        labels=[*lb.gpu_names, "reason"],
    )
    for g in snap.gpus:
        if g.clock_event_mask is None:
            continue
        for bit, reason in CLOCK_EVENT_REASON_BITS.items():
            fam.add_metric([*lb.gpu(g), reason], 1.0 if g.clock_event_mask & bit else 0.0)
    return fam


def _processes(snap: Snapshot, lb: SeriesLabels) -> Iterator[GaugeMetricFamily]:
    labels = [*lb.gpu_names, "pid", "process"]
    memory = GaugeMetricFamily(
        "gpuwise_process_gpu_memory_bytes", "GPU memory a process uses.", labels=labels, unit="bytes"
    )
    cpu = GaugeMetricFamily(
        "gpuwise_process_cpu_ratio",
        "CPU a GPU process used since the last scrape (1 = one core busy).",
        labels=labels,
        unit="ratio",
    )
    for g in snap.gpus:
        for p in g.processes:
            key = [*lb.gpu(g), str(p.pid), p.name or ""]
            if p.used_mib is not None:
                memory.add_metric(key, p.used_mib * 2**20)
            if p.cpu_pct is not None:
                cpu.add_metric(key, p.cpu_pct / 100.0)
    yield memory
    yield cpu


def _signals(snap: Snapshot, config: signals.SignalConfig, lb: SeriesLabels) -> GaugeMetricFamily:
    fam = GaugeMetricFamily(
        "gpuwise_signal",
        "1 while a tuning signal is on (ids and sources: gpuwise/export/data/signals.yaml).",
        labels=[*lb.gpu_names, "signal"],
    )
    for g in snap.gpus:
        for sid, on in signals.evaluate(g, config).items():
            if on is not None:
                fam.add_metric([*lb.gpu(g), sid], 1.0 if on else 0.0)
    return fam
