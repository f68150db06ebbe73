"""The networks: a time-conditioned MLP velocity field shared by every generator, and an MLP digit classifier whose
penultimate layer is the feature space of the sample-quality metrics (no pretrained Inception)."""

from __future__ import annotations

import copy
import math

import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap


def time_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """[sin(w_k t), cos(w_k t)]_k with w_k = 1000^(k / (dim/2 - 1)), k = 0 .. dim/2 - 1 (Fourier features)."""
    half = dim // 2
    w = torch.exp(torch.linspace(0.0, math.log(1000.0), half, device=t.device))
    return torch.cat([torch.sin(t[:, None] * w), torch.cos(t[:, None] * w)], dim=1)


def mlp(sizes: list[int]) -> nn.Sequential:
    """Linear layers of the given widths with SiLU between them (none after the last)."""
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [nn.Linear(a, b), nn.SiLU()]
    return nn.Sequential(*layers[:-1])


class VelocityMLP(nn.Module):
    """v(x, t) = W_out LN(h_L) with residual blocks h_{l+1} = h_l + W2 SiLU(W1 LN(h_l) + E_l emb(t)), h_0 = W_in x:
    a time-conditioned residual MLP with ``depth`` blocks of width ``hidden``."""

    def __init__(self, dim: int, hidden: int, depth: int, time_dim: int) -> None:
        super().__init__()
        self.time_dim = time_dim
        self.inp = nn.Linear(dim, hidden)
        self.norms = nn.ModuleList(nn.LayerNorm(hidden) for _ in range(depth))
        self.w1 = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(depth))
        self.emb = nn.ModuleList(nn.Linear(time_dim, hidden) for _ in range(depth))
        self.w2 = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(depth))
        self.out = nn.Sequential(nn.LayerNorm(hidden), nn.Linear(hidden, dim))

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """v(x, t) for rows x [n, dim] at times t [n]."""
        e, h = time_embedding(t, self.time_dim), self.inp(x)
        for norm, w1, emb, w2 in zip(self.norms, self.w1, self.emb, self.w2, strict=True):
            h = h + w2(nn.functional.silu(w1(norm(h)) + emb(e)))
        return self.out(h)


class SeedBatch:
    """S networks of one architecture (one per training seed) as one field: the parameters of each stacked along a
    leading seed axis and the forward pass vectorised over it (torch.func.vmap), so v(x, t) for x [S, n, d] and t
    [S, n] evaluates seed s's network on slice s. Seed s's output and gradient are those of its own network (the
    seeds share no parameter), in one batched matrix product per layer instead of S."""

    def __init__(self, nets: list[nn.Module]) -> None:
        self.params, self._buffers = stack_module_state(nets)
        base = copy.deepcopy(nets[0]).to("meta")
        self._forward = vmap(lambda p, b, x, t: functional_call(base, (p, b), (x, t)))

    def __call__(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self._forward(self.params, self._buffers, x, t)

    def state_dicts(self) -> list[dict[str, torch.Tensor]]:
        """Each seed's parameters as a state dict of its own network."""
        n = len(next(iter(self.params.values())))
        return [{k: v[s].detach().clone() for k, v in (self.params | self._buffers).items()} for s in range(n)]


class Classifier(nn.Module):
    """logits = W f(x) + b with features f(x) = MLP(x) of width ``feat_dim`` after two hidden layers."""

    def __init__(self, dim: int, hidden: int, feat_dim: int, n_classes: int = 10) -> None:
        super().__init__()
        self.body = nn.Sequential(mlp([dim, hidden, hidden, feat_dim]), nn.SiLU())
        self.head = nn.Linear(feat_dim, n_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """f(x): the feature (penultimate) layer, the space of the sample-quality metrics."""
        return self.body(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """logits W f(x) + b."""
        return self.head(self.body(x))
