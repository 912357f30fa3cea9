"""DistributedDataParallel settings and communication hooks: only with two or more processes."""

from __future__ import annotations

from gpuwise.i18n import msg
from gpuwise.tune.knob_plugins import KnobCode

CALL = "model = DistributedDataParallel(model, {args})"


def _one_process(value, m) -> str | None:
    return msg("one process: DDP settings need --nproc 2 or more") if m.world_size < 2 else None


def _hook_python(value, device: str, batch_size: int) -> list[str]:
    if value in ("fp16", "bf16"):
        return [
            "from torch.distributed.algorithms.ddp_comm_hooks import default_hooks",
            f"model.register_comm_hook(None, default_hooks.{value}_compress_hook)",
        ]
    if value and value.startswith("powersgd-"):
        return [
            "from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as ps",
            f"state = ps.PowerSGDState(process_group=None, matrix_approximation_rank={value.split('-')[1]}, "
            "start_powerSGD_iter=1000)",
            "model.register_comm_hook(state, ps.powerSGD_hook)",
        ]
    return []


BUCKET_CAP_MB = KnobCode(
    name="bucket_cap_mb", skip=_one_process, check_baseline=True, argument_of=CALL, order=60
)
GRADIENT_AS_BUCKET_VIEW = KnobCode(
    name="gradient_as_bucket_view", skip=_one_process, check_baseline=True, argument_of=CALL, order=61
)
STATIC_GRAPH = KnobCode(
    name="static_graph", skip=_one_process, check_baseline=True, argument_of=CALL, order=62
)
COMM_HOOK = KnobCode(name="comm_hook", skip=_one_process, check_baseline=True, python=_hook_python, order=70)
