"""The workload file: what to train, how, on what data, by when, and in which organisation.

`load_workload(path)` validates a YAML file (errors carry file:line, see catalog/yamlfile.py). Derived
quantities (parameters, FLOPs per sample, steps) are methods here so that every consumer computes
them the same way. Sizes in the file use plain units: counts (params, tokens, samples), gigabytes
(`size_gb`, 1e9 bytes), days, years.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from gpuwise.catalog.yamlfile import validate_file
from gpuwise.i18n import joined, msg
from gpuwise.plan import region
from gpuwise.textmodel import TextModel

Precision = Literal["bf16", "fp16", "fp32", "tf32", "fp8"]

# Bytes per gradient value held in memory (the memory-fit check; the optimizer's fp32 master copy is in
# OPTIMIZER_BYTES). fp8 training keeps bf16 gradients (Transformer Engine / torchao practice).
GRAD_BYTES = {"bf16": 2, "fp16": 2, "fp8": 2, "fp32": 4, "tf32": 4}
# Bytes per gradient value as all-reduced. Separate from the compute precision: DDP with autocast keeps
# fp32 parameters, so the gradients it all-reduces are fp32 (autocast casts ops, not parameters:
# https://docs.pytorch.org/docs/stable/amp.html); bf16/fp16 only with a compression hook
# (https://docs.pytorch.org/docs/stable/ddp_comm_hooks.html) or bf16 parameters (FSDP
# MixedPrecision(reduce_dtype=torch.bfloat16), Megatron/DeepSpeed bf16 gradient reduction).
REDUCE_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2}
# Bytes per parameter of optimizer state incl. fp32 master weights (Transformer Math 101; ZeRO paper):
# AdamW mixed precision 12, 8-bit Adam 6 (4 master + 2), SGD with momentum 8 (4 master + 4).
OPTIMIZER_BYTES = {"adamw": 12, "adamw-8bit": 6, "sgd": 8}


class _Strict(TextModel):
    model_config = ConfigDict(extra="forbid")


class ModelSpec(_Strict):
    """The network being trained. Give `params`, or `layers`+`hidden` (transformer), or `flops_per_sample`."""

    name: str | None = None
    params: float | None = Field(None, gt=0, description="parameter count, e.g. 7e9")
    layers: int | None = Field(None, gt=0)
    hidden: int | None = Field(None, gt=0)
    heads: int | None = Field(None, gt=0)
    seq_len: int | None = Field(None, gt=0, description="tokens per sample (transformers)")
    vocab: int | None = Field(None, gt=0)
    flops_per_sample: float | None = Field(
        None, gt=0, description="training FLOPs per sample (forward+backward)"
    )
    activation_bytes_per_sample: float | None = Field(
        None, gt=0, description="for non-transformers; memory check"
    )
    mfu: float | None = Field(
        None, gt=0, le=1, description="model FLOPs utilisation to assume; overrides defaults"
    )

    @model_validator(mode="after")
    def _enough_to_size(self) -> ModelSpec:
        if self.params is None and not (self.layers and self.hidden):
            raise ValueError(
                msg("give 'params', or 'layers' and 'hidden' so the parameter count can be derived")
            )
        if self.flops_per_sample is None and self.seq_len is None:
            raise ValueError(
                msg("give 'seq_len' (transformers, FLOPs from 6·N per token) or 'flops_per_sample'")
            )
        return self

    @property
    def is_transformer(self) -> bool:
        return self.flops_per_sample is None and self.seq_len is not None

    def param_count(self) -> float:
        if self.params is not None:
            return self.params
        # 12·L·h² for attention+MLP blocks plus the embedding (Kaplan et al. 2020 approximation)
        return 12.0 * self.layers * self.hidden**2 + (self.vocab or 0) * self.hidden

    def train_flops_per_sample(self) -> float:
        """Forward+backward FLOPs for one sample.

        Transformers: (6·N + 12·L·h·T) per token × T tokens, the PaLM/nanoGPT MFU definition
        (Chowdhery et al. 2022, App. B); the attention term is dropped when layers/hidden are unknown.
        """
        if self.flops_per_sample is not None:
            return self.flops_per_sample
        t = self.seq_len
        attention = 12.0 * self.layers * self.hidden * t if (self.layers and self.hidden) else 0.0
        return (6.0 * self.param_count() + attention) * t


class Parallelism(_Strict):
    dp: int | Literal["auto"] = "auto"
    zero_stage: int = Field(0, ge=0, le=3)
    fsdp: bool = False
    tp: int = Field(1, ge=1)
    pp: int = Field(1, ge=1)

    @property
    def effective_zero(self) -> int:
        """FSDP full sharding shards like ZeRO-3."""
        return 3 if self.fsdp else self.zero_stage


class Training(_Strict):
    tokens: float | None = Field(None, gt=0)
    samples: float | None = Field(None, gt=0)
    epochs: float | None = Field(None, gt=0, description="passes over data.samples")
    precision: Precision = "bf16"
    global_batch: int = Field(..., gt=0, description="samples (sequences) per optimizer step")
    micro_batch: int = Field(1, gt=0, description="samples per GPU per forward/backward")
    optimizer: Literal["adamw", "adamw-8bit", "sgd"] = "adamw"
    activation_checkpointing: bool = False
    flash_attention: bool = Field(True, description="attention kernels that never store the s×s score matrix")
    bucket_mb: float = Field(
        25.0, gt=0, description="gradient bucket size in MiB (PyTorch DDP default bucket_cap_mb=25)"
    )
    grad_reduce_dtype: Literal["auto", "fp32", "bf16", "fp16"] = Field(
        "auto",
        description="dtype of the gradient all-reduce: auto = fp32 (DDP with autocast keeps fp32 "
        "parameters); bf16/fp16 with a compression hook (bf16_compress_hook) or bf16 parameters",
    )
    parallelism: Parallelism = Field(default_factory=Parallelism)
    runtime: Literal["ddp", "horovod", "fsdp", "deepspeed"] = Field(
        "ddp",
        description="data-parallel runtime: ddp (buckets of bucket_mb), horovod (fusion buffer, cycle time, "
        "per-tensor negotiation), fsdp (sharded all-gather + reduce-scatter, as ZeRO-3), deepspeed "
        "(ZeRO stage from parallelism.zero_stage)",
    )
    grad_tensors: int | None = Field(
        None, gt=0, description="gradient tensors per step (Horovod negotiates each); default 12 per layer"
    )
    checkpoint_interval_minutes: float | None = Field(
        None, gt=0, le=100000, description="minutes between checkpoints (spot: work lost per interruption)"
    )
    restart_minutes: float | None = Field(
        None, ge=0, le=100000, description="minutes from an interruption to training again (spot)"
    )

    @model_validator(mode="after")
    def _one_amount(self) -> Training:
        if sum(x is not None for x in (self.tokens, self.samples, self.epochs)) != 1:
            raise ValueError(msg("give exactly one of 'tokens', 'samples' or 'epochs' (how much to train)"))
        return self


class DataSpec(_Strict):
    size_gb: float = Field(..., gt=0, description="dataset size on disk, gigabytes")
    samples: float | None = Field(None, gt=0, description="samples in the dataset (one epoch)")
    read_pattern: Literal["sequential", "random"] = "sequential"
    bytes_per_sample: float | None = Field(
        None, gt=0, description="bytes read per sample; default size/sample count"
    )
    avg_read_kb: float = Field(128.0, gt=0, description="size of one random read, KiB (one JPEG, one record)")
    source: str | None = Field(
        None,
        description="where the data set is now: s3://, cos://, oss:// (with region) or a local path; "
        "the plan then adds the time to bring it to each option (catalog/data_paths.py)",
    )
    region: str | None = Field(None, description="the bucket's region, e.g. us-east-1")
    link_gbps: float | None = Field(None, gt=0, description="your measured upload / cross-cloud bandwidth")
    dedicated_line_gbps: float | None = Field(None, gt=0, description="a Direct Connect / 专线 port you have")


class OrgContext(_Strict):
    utilisation: float = Field(0.5, gt=0, le=1, description="fraction of the horizon the GPUs do useful work")
    burstiness: float = Field(1.0, ge=1, description="peak demand over average demand")
    horizon_years: float = Field(3.0, gt=0, le=10)
    data_residency: Literal["none", "region", "on-prem"] = "none"
    compliance: list[str] = Field(default_factory=list)
    ops_team: bool = False
    jurisdiction: str | None = Field(
        None,
        description="where the organisation buys and keeps data (us, cn, eu, ...): applies export rules "
        "and data_residency; see plan/data/region_rules.yaml",
    )
    reuse_capacity: bool = Field(
        False,
        description="capacity reserved for this run is used by other work afterwards, so a 1- or 3-year "
        "reserved price is an option when the horizon covers its term",
    )
    allow_community_cloud: bool = Field(
        False,
        description="production serving may use community / unsecured marketplace offers (offers CSV "
        "Tier=community, e.g. RunPod Community Cloud: third-party hosts without a data-centre SLA)",
    )
    currency: str = "USD"
    exchange_rates: dict[str, float] = Field(
        default_factory=dict, description="1 unit of KEY = value units of currency"
    )

    @field_validator("jurisdiction")
    @classmethod
    def _known_jurisdiction(cls, value: str | None) -> str | None:
        if value is None:
            return None
        known = region.known_jurisdictions()
        if value.strip().lower() not in known:
            close = difflib.get_close_matches(value.strip().lower(), known, n=1)
            hint = msg(" (did you mean {name}?)").format(name=repr(close[0])) if close else ""
            raise ValueError(
                msg("{value} is not a jurisdiction gpuwise knows{hint}; use one of {known}").format(
                    value=repr(value), hint=hint, known=joined(", ", known)
                )
            )
        return value.strip().lower()


class Workload(_Strict):
    name: str | None = None
    model: ModelSpec
    training: Training
    data: DataSpec
    deadline_days: float | None = Field(None, gt=0)
    org: OrgContext = Field(default_factory=OrgContext)

    @model_validator(mode="after")
    def _consistent(self) -> Workload:
        if self.training.tokens is not None and self.model.seq_len is None:
            raise ValueError(
                msg(
                    "training.tokens needs model.seq_len to turn tokens into samples; or give training.samples"
                )
            )
        if self.training.epochs is not None and self.data.samples is None:
            raise ValueError(msg("training.epochs needs data.samples (samples per epoch)"))
        if not self.model.is_transformer and self.data.bytes_per_sample is None and self.data.samples is None:
            raise ValueError(
                msg("give data.samples or data.bytes_per_sample so the read volume per step is known")
            )
        par = self.training.parallelism
        if par.fsdp and par.zero_stage not in (0, 3):
            raise ValueError(msg("fsdp: true shards like ZeRO-3; set zero_stage to 3 (or leave it out)"))
        return self

    # ---- derived quantities -------------------------------------------------------------
    def total_samples(self) -> float:
        if self.training.samples is not None:
            return self.training.samples
        if self.training.epochs is not None:
            return self.training.epochs * self.data.samples
        return self.training.tokens / self.model.seq_len

    def total_train_flops(self) -> float:
        return self.total_samples() * self.model.train_flops_per_sample()

    def steps(self) -> float:
        return self.total_samples() / self.training.global_batch

    def bytes_per_sample(self) -> float:
        """Bytes read from storage per sample: given, else dataset size / samples, else 2 B per token."""
        if self.data.bytes_per_sample is not None:
            return self.data.bytes_per_sample
        if self.data.samples is not None:
            return self.data.size_gb * 1e9 / self.data.samples
        return 2.0 * (self.model.seq_len or 1)  # uint16 token ids, the usual pretokenised format


def reduce_bytes(training: Training) -> int:
    """Bytes per parameter the gradient all-reduce moves: 4 unless the workload says bf16/fp16."""
    dtype = training.grad_reduce_dtype
    return REDUCE_BYTES["fp32" if dtype == "auto" else dtype]


def load_workload(path: str | Path) -> Workload:
    """Validate a workload YAML file. Raises DataValidationError with file:line on bad input."""
    return validate_file(Workload, path, see_also=msg("see the examples/ folder for valid files"))
