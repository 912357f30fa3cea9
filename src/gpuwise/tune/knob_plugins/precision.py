"""precision: TF32, bf16, fp16 (with a GradScaler) and FP8 (torchao), each where the hardware has it."""

from __future__ import annotations

from gpuwise.i18n import N_, msg
from gpuwise.tune.knob_plugins import KnobCode

LINES = {
    "tf32": ["torch.backends.cuda.matmul.allow_tf32 = True", "torch.backends.cudnn.allow_tf32 = True"],
    "bf16": [
        N_("# wrap the forward pass and the loss:"),
        'with torch.autocast("DEVICE", dtype=torch.bfloat16):',
        "    loss = compute_loss(model, batch)",
    ],
    "fp16": [
        'scaler = torch.amp.GradScaler("DEVICE")',
        'with torch.autocast("DEVICE", dtype=torch.float16):',
        "    loss = compute_loss(model, batch)",
        "scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()",
    ],
    "fp8": ["from torchao.float8 import convert_to_float8_training", "convert_to_float8_training(model)"],
}


def _cc(m) -> str:
    if not m.capability:
        return msg("no GPU")
    return msg("compute capability {cc}").format(cc=f"{m.capability[0]}.{m.capability[1]}")


def _skip(value, m) -> str | None:
    cuda, cc = m.device == "cuda", m.capability or (0, 0)
    if value == "tf32" and cc < (8, 0):
        return msg("TF32 needs an Ampere or later GPU ({gpu})").format(gpu=_cc(m))
    if value == "bf16" and cuda and cc < (8, 0):
        return msg("bf16 tensor cores need compute capability 8.0 ({gpu})").format(gpu=_cc(m))
    if value == "fp16" and not cuda:
        return msg("fp16 autocast with a GradScaler is for CUDA tensor cores; CPUs have no fast fp16 matmul")
    if value == "fp8" and (cc < (8, 9) or not m.has_torchao):
        return msg("FP8 training needs compute capability 8.9 or later ({gpu}) and torchao installed").format(
            gpu=_cc(m)
        )
    return None


def _python(value, device: str, batch_size: int) -> list[str]:
    return [
        msg(line) if line.startswith("#") else line.replace("DEVICE", device) for line in LINES.get(value, [])
    ]


PRECISION = KnobCode(name="precision", skip=_skip, python=_python, order=10)
