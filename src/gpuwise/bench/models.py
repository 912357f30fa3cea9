"""The bench document's models live in gpuwise.documents.bench (below every reader); imported here
under their old path, so `from gpuwise.bench.models import BenchReport` keeps working."""

from gpuwise.documents.bench import (  # noqa: F401
    BenchReport,
    Measurement,
    PeakKind,
    PeakSource,
    Stats,
    Status,
    legacy_peak_source,
)
from gpuwise.documents.ids import BENCH_SCHEMA  # noqa: F401
