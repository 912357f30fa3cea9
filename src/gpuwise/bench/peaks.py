"""Peak lookups for benchmarks: the catalog for GPUs and links, the derived peak for CPUs.

Unknown hardware gets no peak and a reason, never a guess (DESIGN.md convention 5). The catalog is
imported lazily so a missing or broken catalog costs a reason string, not the whole benchmark run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuwise.documents.bench import PeakSource
from gpuwise.i18n import msg


@dataclass(frozen=True)
class Peak:
    """A peak in the measurement's unit, where it came from, and the typically achievable fraction."""

    value: float | None
    source: PeakSource
    achievable_fraction: float | None = None

    def __post_init__(self) -> None:
        # A reason passed as plain text (nccl_tests.link_peak does) would land in Measurement.peak_source
        # as a str, which pydantic writes out only with a serializer warning: make it a PeakSource here.
        if isinstance(self.source, str):
            source = (
                PeakSource(kind="none", text=self.source)
                if self.value is None
                else PeakSource.model_validate(self.source)  # "catalog: ..." / "derived: ..." as old files
            )
            object.__setattr__(self, "source", source)

    def apply(self, measurement) -> None:
        """Copy the peak onto a Measurement (the runner computes the percentages)."""
        measurement.peak = self.value
        measurement.peak_source = self.source
        measurement.achievable_fraction = self.achievable_fraction if self.value is not None else None


def no_peak(text: str) -> Peak:
    """No peak, and why (the text is shown to people)."""
    return Peak(None, PeakSource(kind="none", text=text))


def _catalog(value: float, spec: Any, text: str, fraction: float | None) -> Peak:
    return Peak(value, PeakSource(kind="catalog", key=spec.key, text=text, source=spec.source), fraction)


def gpu_spec(name: str | None) -> tuple[Any | None, str]:
    """The catalog row for a GPU name reported by the driver, or None and why."""
    if not name:
        return None, msg("no GPU name")
    try:
        from gpuwise.catalog import gpus
    except ImportError as exc:
        return None, msg("GPU catalog not available ({error})").format(error=exc)
    try:
        spec = gpus.match_gpu(name, warn=False)  # the missing peak is reported as a reason instead
    except Exception as exc:  # a broken catalog file must not sink the benchmark
        return None, msg("GPU catalog could not be read: {error}").format(error=exc)
    if spec is None:
        return None, msg("'{name}' is not in the GPU catalog: no peak known (see `gpuwise catalog`)").format(
            name=name
        )
    return spec, msg("catalog: {key}").format(key=spec.key)


def matmul_peak(gpu_name: str | None, dtype: str) -> Peak:
    spec, why = gpu_spec(gpu_name)
    if spec is None:
        return no_peak(why)
    value = spec.peak_tflops(dtype)
    if not value:
        return no_peak(msg("{why}: no {dtype} peak listed").format(why=why, dtype=dtype))
    # mamf_fraction is measured for bf16 matmul; it is the best-known typical fraction for the others too
    return _catalog(
        float(value), spec, msg("{why}, dense {dtype}").format(why=why, dtype=dtype), spec.mamf_fraction
    )


def hbm_peak(gpu_name: str | None) -> Peak:
    spec, why = gpu_spec(gpu_name)
    if spec is None or not spec.memory_bandwidth_gb_s:
        return no_peak(why if spec is None else msg("{why}: no memory bandwidth listed").format(why=why))
    return _catalog(
        float(spec.memory_bandwidth_gb_s),
        spec,
        msg("{why}, HBM/GDDR bandwidth").format(why=why),
        spec.memcpy_fraction,
    )


def pcie_peak(gpu_name: str | None) -> Peak:
    """Per-direction PCIe x16 peak for the catalog's PCIe generation of this GPU (fabrics.csv)."""
    spec, why = gpu_spec(gpu_name)
    if spec is None:
        return no_peak(why)
    gen = spec.pcie_gen
    if not gen:
        return no_peak(msg("{why}: no PCIe generation listed").format(why=why))
    try:
        from gpuwise.catalog import fabrics

        link = fabrics.pcie_x16(int(gen))
    except Exception as exc:  # a broken fabrics.csv costs the peak, not the measurement
        return no_peak(msg("PCIe peak not available from the fabric catalog: {error}").format(error=exc))
    if link is None:
        return no_peak(msg("fabric catalog has no PCIe gen{gen} x16 row").format(gen=gen))
    fraction = spec.pcie_fraction or link.achieved_fraction
    text = msg("{why}; PCIe gen{gen} x16 per direction (fabrics: {key})").format(
        why=why, gen=gen, key=link.key
    )
    return Peak(
        float(link.bandwidth_gb_s),
        PeakSource(kind="catalog", key=spec.key, text=text, source=link.source),
        fraction,
    )


def nvlink_peak(gpu_name: str | None) -> Peak:
    """Per-direction NVLink bandwidth of one GPU: the catalog lists the bidirectional total, so half of it.

    Unidirectional peer copies and nccl-tests busbw are both compared with the per-direction figure
    (H200: 450 GB/s; nvbandwidth's 396 GB/s is 88% of it, REFERENCE §3).
    """
    spec, why = gpu_spec(gpu_name)
    if spec is None or not spec.nvlink_bandwidth_gb_s:
        return no_peak(why if spec is None else msg("{why}: no NVLink listed").format(why=why))
    return _catalog(
        float(spec.nvlink_bandwidth_gb_s) / 2,
        spec,
        msg("{why}, NVLink per direction (half the {total} GB/s bidirectional total)").format(
            why=why, total=f"{spec.nvlink_bandwidth_gb_s:g}"
        ),
        spec.nvlink_fraction,
    )


def cpu_matmul_peak(cpu_peak, dtype: str) -> Peak:
    value, source = cpu_peak.peak(dtype)
    return Peak(value, source)


def no_host_memory_peak() -> Peak:
    return no_peak(msg("no host memory peak: needs DIMM speed and channel count, which bench does not read"))
