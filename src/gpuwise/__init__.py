"""gpuwise: measure, diagnose and plan GPU training machines, cloud instances and self-built clusters."""

__version__ = "0.1.0"
