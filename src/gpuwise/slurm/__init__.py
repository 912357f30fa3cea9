"""The boundary with Slurm: what a job asks for (request.py) and the only place gpuwise runs Slurm's
commands (client.py: sbatch, squeue, sacct, scancel, scontrol, sinfo, srun).

`fleet run --slurm` and `launch --target slurm` write their own job scripts and submit, follow and cancel
them through client.py, so each command is found, bounded by a timeout and turned into a clear error once.
"""
