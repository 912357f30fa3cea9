"""A training spec for `gpuwise tune examples/tune_spec.py`-style use: gpuwise owns the loop.

gpuwise tune examples.tune_spec:spec --trials 10      (run from the repository root)
"""

import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812

from gpuwise.workloads.spec import SpecConfig, TrainingSpec


class Squares(torch.utils.data.Dataset):
    """x -> x**2 regression; sample i is the same whichever loader process reads it."""

    def __len__(self):
        return 100_000

    def __getitem__(self, i):
        x = torch.randn(64, generator=torch.Generator().manual_seed(i))
        return x, x**2


def spec(cfg: SpecConfig) -> TrainingSpec:
    torch.manual_seed(cfg.seed)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 64))
    return TrainingSpec(
        model=model,
        dataset=Squares(),
        loss=lambda m, batch: F.mse_loss(m(batch[0]), batch[1]),
        optimizer=lambda params, **impl: torch.optim.AdamW(params, lr=1e-3, **impl),
        checkpoint_blocks=["2"],  # modules activation checkpointing may wrap
        kind="mlp",
    )
