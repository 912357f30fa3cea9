"""The optimizer's implementation: foreach or fused AdamW kernels (fused has a CPU kernel since torch 2.4)."""

from __future__ import annotations

from gpuwise.tune.knob_plugins import KnobCode


def _python(value, device: str, batch_size: int) -> list[str]:
    if value not in ("foreach", "fused"):
        return []
    return [f"optimizer = torch.optim.AdamW(model.parameters(), lr=..., {value}=True)"]


OPTIMIZER_IMPL = KnobCode(name="optimizer_impl", python=_python, order=50)
