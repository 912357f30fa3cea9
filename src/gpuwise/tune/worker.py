"""One trial's process: `python -m gpuwise.tune.worker CONFIG.json`.

Reads the trial config (spec target, device, batch, steps, settings), runs workloads/loop.py and prints
one progress line per step in the documented format, which the parent reads for pruning (a trial forked
from tune's preloaded forkserver, `forked_main`, sends the same lines over a pipe instead):

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


def _run(config: dict, emit=print) -> dict:
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
            emit(progress_line(rec.index, samples, rec.seconds, rec.data_wait_s, rec.loss))

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


def _print(line: str) -> None:
    print(line, flush=True)


def main(argv: list[str], emit=_print) -> int:
    from gpuwise.atomic import write_text_atomic

    config = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    rank = int(os.environ.get("RANK", "0"))
    try:
        out = {"info": _run(config, emit)}
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


def forked_main(config_path: str, env: dict[str, str], conn, output_path: str) -> None:
    """A trial forked from tune's preloaded forkserver (tune/preloaded.py): the same run as `main`, with
    the environment the trial asked for, its own session, its output in `output_path` and its progress
    lines sent over `conn` (the parent reads them as it reads a worker's stdout)."""
    import multiprocessing
    import signal

    # a child of the forkserver inherits its start method; DataLoader workers need what a fresh
    # interpreter uses (fork on Linux: the dataset is not pickled)
    multiprocessing.set_start_method(None, force=True)
    os.setsid()  # own process group: the parent kills the trial with everything it started
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.environ.clear()
    os.environ.update(env)
    # the import path `python -m gpuwise.tune.worker` would have: the working directory, then PYTHONPATH
    front = [os.getcwd(), *(p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p)]
    sys.path[:0] = [p for p in front if p not in sys.path]
    sys.stdout.flush()
    sys.stderr.flush()
    fd = os.open(output_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)

    def send(line: str) -> None:
        conn.send_bytes(line.encode("utf-8"))

    code = main(["worker", config_path], send)
    sys.stdout.flush()
    sys.stderr.flush()
    conn.close()
    sys.exit(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
