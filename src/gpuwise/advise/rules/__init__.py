"""Doctor rules, one module per layer. Importing this package registers every rule with the engine."""

from gpuwise.advise.rules import (  # noqa: F401
    dcgm_diag,
    driver_cuda,
    evidence_sources,
    fabric_manager,
    framework,
    gpu_health,
    gpu_memory,
    gpu_xid,
    hardware,
    isolation,
    kernel,
    kernel_events,
    measurements,
    monitoring,
    nccl_logs,
    network,
    profiles,
    stability,
    storage,
    toolchain,
)
