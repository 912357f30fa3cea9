"""One trial's process: `python -m gpuwise.tune.worker CONFIG.json`.

Reads the trial config (spec target, device, batch, steps, settings), runs workloads/loop.py and prints
one progress line per step in the documented format, which the parent reads for pruning:

    gpuwise-tune step=3 samples=64 seconds=0.01234 data_wait_s=0.00980 loss=2.302585

At the end it writes {"info": {...}} to the result path, or {"error": {"type", "message"}} when the
trial raised, so the parent can type the failure (out of memory, compile, NCCL, other).
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path


def progress_line(step: int, samples: int, seconds: float, data_wait_s: float, loss: float) -> str:
    return (
        f"gpuwise-tune step={step} samples={samples} seconds={seconds:.6f} "
        f"data_wait_s={data_wait_s:.6f} loss={loss:.6f}"
    )


def _run(config: dict) -> dict:
    import torch

    from gpuwise.workloads import loop, spec

    rank, world = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    device = config["device"]
    if world > 1:
        import torch.distributed as dist

        if device == "cuda":
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
        dist.init_process_group("nccl" if device == "cuda" else "gloo")
    settings = loop.LoopSettings(**config["settings"])
    cfg = spec.SpecConfig(device=device, seed=config["seed"], batch_size=config["batch_size"])
    training = spec.build(config["target"], cfg)
    samples = config["batch_size"] * world

    def on_step(rec) -> None:
        if rank == 0:
            print(progress_line(rec.index, samples, rec.seconds, rec.data_wait_s, rec.loss), flush=True)

    info = loop.train(
        training,
        settings,
        device=device,
        batch_size=config["batch_size"],
        steps=config["steps"],
        on_step=on_step,
    )
    if world > 1:
        torch.distributed.destroy_process_group()
    return info


def main(argv: list[str]) -> int:
    from gpuwise.atomic import write_text_atomic

    config = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    rank = int(os.environ.get("RANK", "0"))
    try:
        out = {"info": _run(config)}
        code = 0
    except BaseException as exc:  # the parent types the failure from this record
        if isinstance(exc, KeyboardInterrupt):
            raise
        out = {
            "error": {
                "type": type(exc).__name__,
                "message": str(exc)[:2000],
                "traceback": traceback.format_exc()[-4000:],
            }
        }
        code = 1
    if rank == 0:
        write_text_atomic(config["result_path"], json.dumps(out))
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
