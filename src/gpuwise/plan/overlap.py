"""How much gradient communication the backward pass hides: PyTorch DDP's bucket schedule, in closed form.

What DDP does (Li et al., "PyTorch Distributed: Experiences on Accelerating Data Parallel Training",
VLDB 2020, https://arxiv.org/abs/2006.15704, §3.2.3 and §4.2; DDP API docs,
https://docs.pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html):

* gradients are grouped into buckets of `bucket_cap_mb` MiB (default 25), in reverse order of
  `model.parameters()`, which is roughly the order their gradients become ready in backward;
* the first bucket is small, 1 MiB (`torch.distributed._DEFAULT_FIRST_BUCKET_BYTES`), so the first
  all-reduce starts early;
* a bucket's all-reduce is launched as soon as all its gradients are ready, and the all-reduces run
  one after another on the process group's stream, in bucket order.

The model: gradient bytes become ready at a constant rate over the backward of the last micro-batch
(the earlier ones run under `no_sync()`), so bucket j is ready at `backward · X_j / G`, where X_j is
the gradient bytes up to and including bucket j. A bucket's all-reduce costs `per_bucket + per_byte ·
size`. The last all-reduce finishes at `F = max_j (ready_j + Σ_{i ≥ j} cost_i)` (a serial queue), and
the exposed communication is `F − backward`: whatever is left after the last backward compute.

All buckets after the first have the same size except the last, so `ready_j + Σ_{i≥j} cost_i` is linear
in j between the second and the last full bucket, and its maximum is at one of four buckets: the
first, the second, the last full one and the last. The result stays vectorised over options × nodes.
"""

from __future__ import annotations

import numpy as np

DDP_FIRST_BUCKET_BYTES = float(2**20)  # torch/distributed/constants.py: _DEFAULT_FIRST_BUCKET_BYTES


def bucket_sizes(grad_bytes: float, first_bytes: float, bucket_bytes: float) -> tuple[float, int, float]:
    """(first bucket bytes, number of full buckets after it, bytes of the last partial bucket or 0)."""
    first = min(first_bytes, grad_bytes)
    rest = max(grad_bytes - first, 0.0)
    full = int(rest // bucket_bytes)
    partial = rest - full * bucket_bytes
    if partial <= 1e-9 * max(grad_bytes, 1.0):
        partial = 0.0
    return first, full, partial


def exposed_after_backward(
    grad_bytes: float,
    first_bytes: float,
    bucket_bytes: float,
    per_byte_s,
    per_bucket_s,
    backward_s,
):
    """Seconds of gradient all-reduce left after the last micro-batch's backward ends (arrays broadcast)."""
    first, full, partial = bucket_sizes(grad_bytes, first_bytes, bucket_bytes)
    sizes_after: list[tuple[float, float, int]] = []  # (ready at X bytes, bytes from j on, buckets from j on)
    count = 1 + full + (1 if partial else 0)
    sizes_after.append((first, grad_bytes, count))
    if full >= 1:
        sizes_after.append((first + bucket_bytes, grad_bytes - first, count - 1))
        last_full_x = first + full * bucket_bytes
        sizes_after.append((last_full_x, grad_bytes - last_full_x + bucket_bytes, 1 + (1 if partial else 0)))
    last_size = partial or (bucket_bytes if full else first)
    sizes_after.append((grad_bytes, last_size, 1))
    per_byte_s, per_bucket_s, backward_s = np.broadcast_arrays(
        np.asarray(per_byte_s, dtype=float),
        np.asarray(per_bucket_s, dtype=float),
        np.asarray(backward_s, dtype=float),
    )
    finish = np.zeros(per_byte_s.shape)
    for ready_x, bytes_from, buckets_from in sizes_after:
        ready = backward_s * (ready_x / grad_bytes if grad_bytes > 0 else 1.0)
        finish = np.maximum(finish, ready + per_byte_s * bytes_from + per_bucket_s * buckets_from)
    return np.maximum(finish - backward_s, 0.0)


def simulate(sizes: list[float], per_byte_s: float, per_bucket_s: float, backward_s: float) -> float:
    """The same schedule bucket by bucket (scalar; the reference the closed form is tested against)."""
    total = sum(sizes)
    done, end = 0.0, 0.0
    for size in sizes:
        done += size
        ready = backward_s * done / total
        end = max(end, ready) + per_bucket_s + per_byte_s * size
    return max(end - backward_s, 0.0)
