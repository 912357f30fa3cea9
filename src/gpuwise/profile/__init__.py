"""`gpuwise profile`: run a spec's steps under torch.profiler, keep the Kineto trace, attribute the step.

run.py (profiler schedule, trace file) -> attribute.py (step time by phase from the trace's events) ->
findings.py (data-loader bound, exposed communication, launch-bound kernels, host-to-device stalls) ->
model.py (ProfileResult, JSON gpuwise-profile/1, which `gpuwise tune --profile` reads for its priors).
"""

from __future__ import annotations
