"""`gpuwise stability`: repeat short probes of each layer for a while and say whether this machine is steady.

A cloud instance may share its host with noisy neighbours; an own node is isolated. Bench measures
each layer once; this package measures them again and again (probes.py, each probe well under a
second, reusing bench's timing and fio code), records with every sample the context that explains a
change (context.py: CPU steal, cgroup throttling, involuntary context switches, page faults, TCP
retransmits, NVML clocks, power and clock-event reasons), then summarises each layer (stats.py),
finds the windows where it slowed (changepoints.py, PELT) and which context signal moved with it,
and gives a verdict per layer (verdict.py). runner.py ties them together; model.py is the result
document (schema gpuwise-stability/1) that doctor --stability, plan
--calibrate, history and compare read.
"""
