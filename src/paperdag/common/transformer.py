"""A tiny decoder-only transformer in plain torch (GPT-2 layout, pre-norm, no biases).

    h_0 = E[x] + P[pos];  h_{l+1/2} = h_l + Attn(RMSNorm(h_l));  h_{l+1} = h_{l+1/2} + MLP(RMSNorm(h_{l+1/2}))
    logits = W_head RMSNorm(h_L);  MLP(u) = W_2 relu(W_1 u)^2

Weights follow torch's (out_features, in_features) layout, so a matrix's rows are output neurons.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class GPTConfig:
    vocab_size: int = 256
    context: int = 64
    n_layer: int = 2
    n_head: int = 4
    d_model: int = 64
    mlp_ratio: int = 4


class RMSNorm(nn.Module):
    """y = g * x / sqrt(mean(x^2) + eps), with a learned gain g."""

    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


class CausalSelfAttention(nn.Module):
    """softmax(Q K^T / sqrt(d_head) + causal mask) V over ``n_head`` heads, then an output projection."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.n_head = cfg.n_head
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.n_head, d // self.n_head).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class MLP(nn.Module):
    """W_2 relu(W_1 x)^2 (squared ReLU)."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.fc = nn.Linear(cfg.d_model, cfg.mlp_ratio * cfg.d_model, bias=False)
        self.proj = nn.Linear(cfg.mlp_ratio * cfg.d_model, cfg.d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(F.relu(self.fc(x)).square())


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.norm1, self.attn = RMSNorm(cfg.d_model), CausalSelfAttention(cfg)
        self.norm2, self.mlp = RMSNorm(cfg.d_model), MLP(cfg)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class GPT(nn.Module):
    """Token + position embeddings, ``n_layer`` blocks, final norm, untied output head."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos_emb = nn.Embedding(cfg.context, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.norm = RMSNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.apply(self._init)

    @staticmethod
    def _init(module: nn.Module) -> None:
        """N(0, 0.02^2) for linear and embedding weights (GPT-2 initialisation)."""
        if isinstance(module, nn.Linear | nn.Embedding):
            nn.init.normal_(module.weight, std=0.02)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        """Logits of shape (batch, time, vocab)."""
        pos = torch.arange(idx.size(1), device=idx.device)
        x = self.tok_emb(idx) + self.pos_emb(pos)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))

    def loss(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Mean next-token cross-entropy in nats."""
        logits = self.forward(idx)
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten())

    def hidden_matrices(self) -> list[nn.Parameter]:
        """The 2-D weights inside the blocks (what Muon-type optimizers update); embeddings and head excluded."""
        return [p for p in self.blocks.parameters() if p.ndim == 2]
