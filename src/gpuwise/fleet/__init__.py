"""Fleet: many nodes' results -> drift, peer-relative outliers, findings by reach, a straggler verdict.

Sits above advise/plan/bench/facts and below report/pipeline/commands (DESIGN.md 'Where the second
wave goes'). `analyze.analyze_fleet(DIR)` is the offline analysis; `slurm` builds and runs the job
that collects a fleet directory; `expect` and `healthcheck` serve Slurm's HealthCheckProgram.
"""
