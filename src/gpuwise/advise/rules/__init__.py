"""Doctor rules, one module per layer. Importing this package registers every rule with the engine."""

from gpuwise.advise.rules import (  # noqa: F401
    driver_cuda,
    framework,
    gpu_health,
    gpu_memory,
    gpu_xid,
    hardware,
    isolation,
    kernel,
    measurements,
    monitoring,
    nccl_logs,
    network,
    profiles,
    stability,
    storage,
    toolchain,
)
