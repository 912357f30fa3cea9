"""The small reference models the training benchmark steps: a GPT-style decoder and a small ResNet-style CNN.

Defined here (not imported from a model zoo) so the FLOPs are known and nothing is downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GPTConfig:
    vocab: int = 2048
    seq_len: int = 128
    d_model: int = 128
    n_layers: int = 2
    n_heads: int = 4


@dataclass(frozen=True)
class CNNConfig:
    image_hw: int = 32
    width: int = 32
    classes: int = 10


def build_gpt(cfg: GPTConfig):
    import torch
    from torch import nn
    from torch.nn import functional as F  # noqa: N812

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
            self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
            self.proj = nn.Linear(cfg.d_model, cfg.d_model)
            self.mlp = nn.Sequential(
                nn.Linear(cfg.d_model, 4 * cfg.d_model), nn.GELU(), nn.Linear(4 * cfg.d_model, cfg.d_model)
            )

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
            q, k, v = (z.view(b, t, cfg.n_heads, c // cfg.n_heads).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, c)
            x = x + self.proj(y)
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(cfg.vocab, cfg.d_model)
            self.pos = nn.Embedding(cfg.seq_len, cfg.d_model)
            self.blocks = nn.Sequential(*[Block() for _ in range(cfg.n_layers)])
            self.ln = nn.LayerNorm(cfg.d_model)
            self.head = nn.Linear(cfg.d_model, cfg.vocab, bias=False)

        def forward(self, idx, targets):
            pos = torch.arange(idx.shape[1], device=idx.device)
            x = self.blocks(self.tok(idx) + self.pos(pos))
            logits = self.head(self.ln(x))
            return F.cross_entropy(logits.float().view(-1, cfg.vocab), targets.view(-1))

    return GPT()


def build_cnn(cfg: CNNConfig):
    from torch import nn
    from torch.nn import functional as F  # noqa: N812

    def conv_bn(cin, cout, stride=1):
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)
        )

    class Residual(nn.Module):
        def __init__(self, ch):
            super().__init__()
            self.a, self.b = conv_bn(ch, ch), conv_bn(ch, ch)

        def forward(self, x):
            return x + self.b(self.a(x))

    w = cfg.width

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(
                conv_bn(3, w),
                Residual(w),
                conv_bn(w, 2 * w, 2),
                Residual(2 * w),
                conv_bn(2 * w, 4 * w, 2),
                Residual(4 * w),
                nn.AdaptiveAvgPool2d(1),
                nn.Flatten(),
            )
            self.fc = nn.Linear(4 * w, cfg.classes)

        def forward(self, images, targets):
            return F.cross_entropy(self.fc(self.body(images)).float(), targets)

    return CNN()
