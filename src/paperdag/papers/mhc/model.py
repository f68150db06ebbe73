"""The shared tiny transformer with a pluggable residual connection (connections.py).

``residual`` is the shared substrate's GPT unchanged (paperdag.common.transformer). ``hc`` and ``mhc`` keep its
attention, MLP and norms and widen the stream to n copies: x_0 = (E[x] + P[pos]) replicated n times; each of the
2 L sub-layers (attention, MLP) updates x_{l+1} = H_res x_l + H_post^T F(Norm(H_pre x_l)); the head reads
RMSNorm(sum_i x_L,i). Every sub-layer's H_res is recorded in ``last_res`` during a forward pass, for the gain.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from paperdag.common.transformer import GPT, MLP, CausalSelfAttention, GPTConfig, RMSNorm

from .connections import HyperConnection, ManifoldHyperConnection, mix_streams, read_in

KINDS = ("residual", "hc", "mhc")


@dataclass(frozen=True)
class StreamConfig:
    """The hyper-connection settings: n streams, the initial mixing s, the initial gate, Sinkhorn iterations."""

    n_streams: int
    init_mix: float
    gate_init: float
    sinkhorn_iters: int


class SubLayer(nn.Module):
    """One sub-layer F (attention or MLP) with its pre-norm and its connection maps."""

    def __init__(self, f: nn.Module, cfg: GPTConfig, connection: nn.Module):
        super().__init__()
        self.norm, self.f, self.connection = RMSNorm(cfg.d_model), f, connection

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(x_{l+1}, H_res) for the stream x (B, T, n, C)."""
        h_pre, h_post, h_res = self.connection(x)
        return mix_streams(x, self.f(self.norm(read_in(x, h_pre))), h_post, h_res), h_res


class StreamGPT(nn.Module):
    """GPT (same embeddings, sub-layers, head and GPT-2 init as the substrate) on an n-stream residual."""

    def __init__(self, cfg: GPTConfig, kind: str, s: StreamConfig):
        super().__init__()
        self.cfg, self.n = cfg, s.n_streams
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos_emb = nn.Embedding(cfg.context, cfg.d_model)
        layers = []
        for i in range(2 * cfg.n_layer):
            f = CausalSelfAttention(cfg) if i % 2 == 0 else MLP(cfg)
            conn = (HyperConnection(s.n_streams, cfg.d_model, i, s.init_mix, s.gate_init) if kind == "hc" else
                    ManifoldHyperConnection(s.n_streams, cfg.d_model, i, s.init_mix, s.gate_init, s.sinkhorn_iters))
            layers.append(SubLayer(f, cfg, conn))
        self.layers = nn.ModuleList(layers)
        self.norm = RMSNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        for m in (self.tok_emb, self.pos_emb, self.head, *(layer.f for layer in self.layers)):
            m.apply(GPT._init)
        self.last_res: list[torch.Tensor] = []

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        """Logits (batch, time, vocab)."""
        h = self.tok_emb(idx) + self.pos_emb(torch.arange(idx.size(1), device=idx.device))
        x = h.unsqueeze(-2).expand(*h.shape[:-1], self.n, h.shape[-1])
        self.last_res = []
        for layer in self.layers:
            x, h_res = layer(x)
            self.last_res.append(h_res.detach())
        return self.head(self.norm(x.sum(-2)))

    def loss(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Mean next-token cross-entropy in nats."""
        return F.cross_entropy(self.forward(idx).flatten(0, 1), targets.flatten())


def build_model(kind: str, cfg: GPTConfig, s: StreamConfig) -> nn.Module:
    """The substrate's GPT for ``residual``, else a StreamGPT with HC or mHC connections."""
    if kind not in KINDS:
        raise ValueError(f"unknown connection {kind!r} (known: {', '.join(KINDS)})")
    return GPT(cfg) if kind == "residual" else StreamGPT(cfg, kind, s)
