"""Launch: plan's choice -> a training job on Slurm, SkyPilot or Tencent Cloud, with preflight and export.

Sits above fleet and below report (DESIGN.md 'Where the second wave goes'). job.py reads JOB.yaml;
resources.py resolves the offer and cost (--plan / --offer); transfer.py and migration.py are the
checks every launch adds; steps.py is the shell each node runs (preflight, exporter); slurm.py,
skypilot.py and tencent.py are the targets behind targets.py (boot_script.py: the user data every cloud
VM target shares); build.py ties them together.
"""
