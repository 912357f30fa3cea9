"""A stand-in training script for the preflight end-to-end test: one gloo all-reduce across the job's ranks
(torchrun's environment), then it waits until the test has scraped the job's exporters (the file named by
$GW_RELEASE appears; at most 300 s) and exits 0."""

import os
import socket
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
t = torch.ones(1)
dist.all_reduce(t)
print(
    f"rank {dist.get_rank()}/{dist.get_world_size()} on {socket.gethostname()}: sum {t.item():g}", flush=True
)
deadline = time.monotonic() + 300
while not os.path.exists(os.environ["GW_RELEASE"]) and time.monotonic() < deadline:
    time.sleep(0.5)
dist.barrier()
dist.destroy_process_group()
sys.exit(0 if os.path.exists(os.environ["GW_RELEASE"]) else 3)
