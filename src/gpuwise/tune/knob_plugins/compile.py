"""torch.compile, channels_last and cuDNN benchmark: the same math through other kernels."""

from __future__ import annotations

from gpuwise.i18n import msg
from gpuwise.tune.knob_plugins import KnobCode


def _compile_skip(value, m) -> str | None:
    if not m.has_compiler:
        return msg("torch.compile on CPU needs a C++ compiler (g++), which is not installed")
    if value == "reduce-overhead" and m.device != "cuda":
        return msg("reduce-overhead uses CUDA Graphs; on CPU it is the default mode")
    return None


def _compile_python(value, device: str, batch_size: int) -> list[str]:
    if value == "off":
        return []
    mode = "" if value == "default" else f', mode="{value}"'
    return [f"model = torch.compile(model{mode})"]


def _channels_last_skip(value, m) -> str | None:
    return msg("the workload has no image (NCHW) inputs") if value and not m.image_inputs else None


def _channels_last_python(value, device: str, batch_size: int) -> list[str]:
    if not value:
        return []
    return [
        "model = model.to(memory_format=torch.channels_last)  " + msg("# and images.to(memory_format=...)")
    ]


def _cudnn_skip(value, m) -> str | None:
    if value and (m.device != "cuda" or m.kind != "cnn"):
        return msg("cuDNN benchmark picks convolution algorithms on CUDA; no convolutions on a GPU here")
    return None


COMPILE = KnobCode(name="compile", skip=_compile_skip, python=_compile_python, order=80)
CHANNELS_LAST = KnobCode(
    name="channels_last", skip=_channels_last_skip, python=_channels_last_python, order=30
)
CUDNN_BENCHMARK = KnobCode(
    name="cudnn_benchmark",
    skip=_cudnn_skip,
    python=lambda value, device, batch_size: ["torch.backends.cudnn.benchmark = True"] if value else [],
    order=20,
)
