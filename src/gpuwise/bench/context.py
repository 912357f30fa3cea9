"""What every benchmark needs to know about the machine: device, dtype support, versions, clocks.

A BenchContext is built once by the runner and handed (pickled) to each benchmark process, so it
holds plain data only. What it knows about the CPU and the mounts is the probe's own parse
(facts/cpu.py, facts/storage.py, read once through the Host), so bench and probe agree. Clocks are read again right after each benchmark, while the device is still
warm, because a clock read at idle says little about the clock a result was measured at.
"""

from __future__ import annotations

import os
import platform
import socket
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpuwise.bench.cpu_peak import CpuPeak, affinity, read_cpu_peak
from gpuwise.i18n import joined, msg

if TYPE_CHECKING:  # the facts models import pydantic: imported when a context is built, not before
    from gpuwise.facts.models import Cpu, Mount


class Skip(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised by a benchmark that cannot run here (no GPU, one GPU for a pair test)."""


class MissingTool(Skip):
    """Raised by a benchmark whose tool is not installed (fio): skipped, and the user can install it.

    Unlike a plain Skip (this machine has no GPU: nothing to install), it makes `gpuwise bench` exit
    EXIT_SKIPPED, and the result names the tool (Measurement.missing_tool)."""

    def __init__(self, tool: str, message: str, install: str):
        super().__init__(msg("{message} To fix: {install}").format(message=message, install=install))
        self.tool = tool


@dataclass(frozen=True)
class BenchOptions:
    """What the user asked for (the CLI flags), independent of the machine."""

    mode: str = "quick"  # "quick" or "full"
    data_dir: str | None = None
    sizes: tuple[int, ...] | None = None  # collective / copy sizes in bytes, when given
    world_size: int | None = None  # collective ranks on this node; default: GPUs, or 2 on CPU


@dataclass(frozen=True)
class DtypeSupport:
    """Can this device run a dtype natively: `ok` for code, `why` for people."""

    ok: bool
    why: str

    def __str__(self) -> str:
        return f"{'yes' if self.ok else 'no'}: {self.why}"


@dataclass
class BenchContext:
    options: BenchOptions
    device: str  # "cuda" or "cpu"
    gpu_names: list[str] = field(default_factory=list)
    dtype_support: dict[str, DtypeSupport] = field(default_factory=dict)
    cpu_peak: CpuPeak | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    cpu: Cpu | None = None  # the probe's CPU facts of this machine
    mounts: list[Mount] = field(default_factory=list)  # the probe's mount table (facts.storage.mounts)
    scratch_dir: str | None = None  # set by the runner: the one directory this benchmark may write to

    def say(self, text: str) -> None:
        """Tell the user what is running now (the runner replaces this with its progress pipe)."""

    @property
    def mode(self) -> str:
        return self.options.mode

    @property
    def gpu_count(self) -> int:
        return len(self.gpu_names)

    @property
    def gpu_name(self) -> str | None:
        return self.gpu_names[0] if self.gpu_names else None

    def supports(self, dtype: str) -> bool:
        support = self.dtype_support.get(dtype)
        return support is not None and support.ok

    def support_reason(self, dtype: str) -> str:
        support = self.dtype_support.get(dtype)
        return support.why if support else f"{dtype} unknown"

    def dtype_support_json(self) -> dict[str, str]:
        """The dtype table as bench results record it: dtype -> "yes: why" / "no: why"."""
        return {dtype: str(support) for dtype, support in self.dtype_support.items()}


def _cuda_dtype_support(torch, capability: tuple[int, int]) -> dict[str, DtypeSupport]:
    sm = f"SM {capability[0]}{capability[1]}"
    tf32, bf16 = capability[0] >= 8, torch.cuda.is_bf16_supported()
    fp8 = capability >= (8, 9) and hasattr(torch, "float8_e4m3fn") and hasattr(torch, "_scaled_mm")
    return {
        "fp32": DtypeSupport(True, msg("every CUDA GPU ({sm})").format(sm=sm)),
        "fp16": DtypeSupport(True, msg("tensor cores ({sm})").format(sm=sm)),
        "tf32": DtypeSupport(
            tf32,
            (msg("{sm} >= 80 has TF32 tensor cores") if tf32 else msg("{sm} < 80 has no TF32")).format(sm=sm),
        ),
        "bf16": DtypeSupport(
            bf16, (msg("{sm} supports bf16") if bf16 else msg("{sm} lacks bf16")).format(sm=sm)
        ),
        "fp8": DtypeSupport(
            fp8,
            (
                msg("{sm} >= 89 has FP8 tensor cores")
                if fp8
                else msg("FP8 needs SM >= 89 and torch._scaled_mm ({sm})")
            ).format(sm=sm),
        ),
    }


def _cpu_dtype_support(cpu_peak: CpuPeak) -> dict[str, DtypeSupport]:
    bf16 = cpu_peak.source.get("bf16") if "bf16" in cpu_peak.tflops else None
    return {
        "fp32": DtypeSupport(True, msg("every CPU")),
        "tf32": DtypeSupport(False, msg("TF32 is a GPU tensor-core format")),
        "bf16": DtypeSupport(True, msg("native bf16 instructions ({flag})").format(flag=bf16.key))
        if bf16 is not None
        else DtypeSupport(False, msg("no avx512_bf16/amx_bf16 flag (bf16 would be emulated)")),
        "fp16": DtypeSupport(False, msg("no native fp16 matmul on this CPU path")),
        "fp8": DtypeSupport(False, msg("FP8 matmul needs an SM >= 89 GPU")),
    }


def versions(torch) -> dict[str, Any]:
    from gpuwise import __version__

    info: dict[str, Any] = {
        "gpuwise": __version__,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "platform": platform.platform(),
        "torch_threads": torch.get_num_threads(),
    }
    if torch.cuda.is_available():
        info["cuda"] = torch.version.cuda
        info["cudnn"] = torch.backends.cudnn.version()
        try:
            info["nccl"] = joined(".", (str(p) for p in torch.cuda.nccl.version()))
        except Exception as exc:
            info["nccl"] = f"unknown ({exc})"
    return info


def read_clocks(device: str) -> dict[str, Any]:
    """Clocks in effect now: per-GPU SM clock (MHz) via torch's NVML binding, or the CPU MHz."""
    if device == "cuda":
        import torch

        clocks = {}
        for i in range(torch.cuda.device_count()):
            try:
                clocks[f"gpu{i}_sm_mhz"] = torch.cuda.clock_rate(i)
            except Exception as exc:  # NVML missing in a container is common: record, do not fail
                clocks[f"gpu{i}_sm_mhz"] = f"unknown ({type(exc).__name__})"
        return clocks
    from gpuwise.capture.host import LiveHost
    from gpuwise.facts.cpu import parse_cpuinfo
    from gpuwise.facts.sourcing import to_float

    blocks = parse_cpuinfo(LiveHost().read_file("/proc/cpuinfo") or "")
    mhz = [m for m in (to_float(b.get("cpu MHz")) for b in blocks) if m]
    return {"cpu_mhz_max_now": max(mhz)} if mhz else {"cpu_mhz": "unknown (no cpu MHz in /proc/cpuinfo)"}


def build_context(options: BenchOptions) -> BenchContext:
    """Inspect this machine (imports torch; raises MissingDependencyError without it)."""
    from gpuwise.bench import require_torch
    from gpuwise.capture.host import LiveHost
    from gpuwise.facts.cpu import collect_cpu
    from gpuwise.facts.storage import collect_storage

    torch = require_torch()
    host = LiveHost()
    cpu = collect_cpu(host)
    mounts = collect_storage(host).mounts
    cpu_peak = read_cpu_peak(host, cpu, affinity())
    env = versions(torch)
    env["hostname"] = socket.gethostname()
    env["cpu_model"] = cpu_peak.model
    env["cpu_cores"] = cpu_peak.cores
    if torch.cuda.is_available() and torch.cuda.device_count() > 0:
        names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        capability = tuple(torch.cuda.get_device_capability(0))
        ctx = BenchContext(options, "cuda", names, _cuda_dtype_support(torch, capability), cpu_peak, env)
        ctx.cpu, ctx.mounts = cpu, mounts
        env["gpus"] = names
        env["cuda_visible_devices"] = os.environ.get("CUDA_VISIBLE_DEVICES")
        props = torch.cuda.get_device_properties(0)
        env["gpu0_memory_bytes"] = props.total_memory
        from gpuwise.bench.peaks import gpu_spec

        spec, why = gpu_spec(names[0])
        env["catalog_gpu"] = spec.key if spec is not None else None
        if spec is None:
            ctx.warnings.append(
                msg("{why}: results are shown without {pct} of peak").format(why=why, pct="%")
            )
    else:
        ctx = BenchContext(options, "cpu", [], _cpu_dtype_support(cpu_peak), cpu_peak, env)
        ctx.cpu, ctx.mounts = cpu, mounts
        ctx.warnings.append(
            msg("no CUDA GPU visible to torch: running the CPU paths; GPU layers are skipped")
        )
    env["clocks_at_start"] = read_clocks(ctx.device)
    return ctx
