"""The reference specs: `gpt-small` and `cnn-small` (the bench's models) and `mlp-slow-data`.

Samples are generated from their index with a seeded generator, so every data-loading setting (workers,
prefetching) yields the same batches in the same order and the numerics guard compares like with like.
`mlp-slow-data` waits `read_latency_s` in every `__getitem__`, the way a read from network or object
storage waits; the model is small, so the step is data-bound until the loader reads in parallel.
"""

from __future__ import annotations

import time

from gpuwise.bench.train_models import CNNConfig, GPTConfig, build_cnn, build_gpt
from gpuwise.workloads.spec import SpecConfig, TrainingSpec

GPT_CPU = GPTConfig()
GPT_CUDA = GPTConfig(vocab=32768, seq_len=1024, d_model=768, n_layers=6, n_heads=12)
CNN_CPU = CNNConfig(width=16)
CNN_CUDA = CNNConfig(image_hw=64, width=64)


class IndexedDataset:
    """A map-style dataset whose sample i is drawn from a generator seeded with (seed, i)."""

    def __init__(self, length: int, seed: int, make):
        self.length, self.seed, self.make = length, seed, make

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, i: int):
        import torch

        if not 0 <= i < self.length:
            raise IndexError(i)
        gen = torch.Generator().manual_seed(self.seed * 1_000_003 + i)
        return self.make(gen)


class SlowDataset(IndexedDataset):
    def __init__(self, length: int, seed: int, make, read_latency_s: float):
        super().__init__(length, seed, make)
        self.read_latency_s = read_latency_s

    def __getitem__(self, i: int):
        time.sleep(self.read_latency_s)  # a storage read's latency: the wait more loader workers overlap
        return super().__getitem__(i)


def _adamw(lr: float):
    def factory(params, **impl):
        import torch

        return torch.optim.AdamW(params, lr=lr, **impl)

    return factory


def gpt_small(cfg: SpecConfig) -> TrainingSpec:
    """The bench's GPT-style decoder (2 layers, d=128 on CPU; 6 layers, d=768 on CUDA) on random tokens."""
    import torch

    gcfg = GPT_CUDA if cfg.device == "cuda" else GPT_CPU
    torch.manual_seed(cfg.seed)
    model = build_gpt(gcfg)

    def sample(gen):
        idx = torch.randint(0, gcfg.vocab, (gcfg.seq_len + 1,), generator=gen)
        return idx[:-1], idx[1:]

    return TrainingSpec(
        model=model,
        dataset=IndexedDataset(1 << 20, cfg.seed, sample),
        loss=lambda m, batch: m(batch[0], batch[1]),
        optimizer=_adamw(3e-4),
        checkpoint_blocks=[f"blocks.{i}" for i in range(gcfg.n_layers)],
        kind="transformer",
        tokens_per_sample=gcfg.seq_len,
    )


def cnn_small(cfg: SpecConfig) -> TrainingSpec:
    """The bench's small ResNet-style CNN on random 32x32 (CPU) or 64x64 (CUDA) images."""
    import torch

    ccfg = CNN_CUDA if cfg.device == "cuda" else CNN_CPU
    torch.manual_seed(cfg.seed)
    model = build_cnn(ccfg)

    def sample(gen):
        image = torch.randn(3, ccfg.image_hw, ccfg.image_hw, generator=gen)
        return image, torch.randint(0, ccfg.classes, (), generator=gen)

    return TrainingSpec(
        model=model,
        dataset=IndexedDataset(1 << 20, cfg.seed, sample),
        loss=lambda m, batch: m(batch[0], batch[1]),
        optimizer=_adamw(1e-3),
        checkpoint_blocks=["body.1", "body.3", "body.5"],
        kind="cnn",
        image_inputs=True,
    )


MLP_FEATURES, MLP_HIDDEN, MLP_CLASSES = 256, 512, 10
MLP_READ_LATENCY_S = 0.02  # 20 ms per sample: one read from network or object storage


def mlp_slow_data(cfg: SpecConfig, read_latency_s: float = MLP_READ_LATENCY_S) -> TrainingSpec:
    """A 3-layer MLP whose dataset waits `read_latency_s` per sample: data-bound with one loader process."""
    import torch
    from torch import nn
    from torch.nn import functional as F  # noqa: N812

    torch.manual_seed(cfg.seed)
    model = nn.Sequential(
        nn.Linear(MLP_FEATURES, MLP_HIDDEN),
        nn.ReLU(),
        nn.Linear(MLP_HIDDEN, MLP_HIDDEN),
        nn.ReLU(),
        nn.Linear(MLP_HIDDEN, MLP_CLASSES),
    )

    def sample(gen):
        return torch.randn(MLP_FEATURES, generator=gen), torch.randint(0, MLP_CLASSES, (), generator=gen)

    return TrainingSpec(
        model=model,
        dataset=SlowDataset(1 << 20, cfg.seed, sample, read_latency_s),
        loss=lambda m, batch: F.cross_entropy(m(batch[0]), batch[1]),
        optimizer=_adamw(1e-3),
        checkpoint_blocks=["2"],
        kind="mlp",
    )


REFERENCE_SPECS = {"gpt-small": gpt_small, "cnn-small": cnn_small, "mlp-slow-data": mlp_slow_data}
DEFAULT_BATCH = {"gpt-small": 8, "cnn-small": 32, "mlp-slow-data": 32}
