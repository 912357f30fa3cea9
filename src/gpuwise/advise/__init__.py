"""Doctor: rules over Facts (+ Measurements) that return ranked, evidence-backed Findings."""

from gpuwise.advise.engine import registry, run_rules
from gpuwise.advise.finding import Finding

__all__ = ["Finding", "registry", "run_rules"]
