"""Run by SkyPilot's own Python (.venv-skypilot): load task YAMLs with sky.Task.from_yaml, dump them with
Task.to_yaml_config, load that again, and print what SkyPilot understood, as JSON, for the test to compare.

Usage: python sky_validate.py TASK.yaml [...]   (HOME must hold the SkyPilot catalog the test wrote)
"""

import json
import sys

import sky


def understood(task) -> dict:
    (res,) = list(task.resources)
    return {
        "num_nodes": task.num_nodes,
        "cloud": str(res.cloud).lower() if res.cloud else None,
        "instance_type": res.instance_type,
        "accelerators": res.accelerators,
        "region": res.region,
        "use_spot": res.use_spot,
        "image_id": res.image_id,
        "envs": task.envs,
        "setup": task.setup,
        "run": task.run,
        "file_mounts": sorted((task.file_mounts or {}).keys()) + sorted((task.storage_mounts or {}).keys()),
    }


out = {}
for path in sys.argv[1:]:
    task = sky.Task.from_yaml(path)
    config = task.to_yaml_config()
    again = sky.Task.from_yaml_config(config)
    out[path] = {"loaded": understood(task), "round_trip": understood(again), "config": config}
print(json.dumps(out, default=str))
