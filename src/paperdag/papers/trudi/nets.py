"""Networks of S training seeds at once: every parameter carries a leading seed axis, so one tensor operation
advances every seed (the seeds of a configuration are batched, not looped), and seed s's numbers depend on seed s
alone.

- ``SeedLinear``: y_s = x_s W_s + b_s for inputs x [S, ..., in] (one batched matrix product), W_s, b_s ~
  U(-1/sqrt(in), 1/sqrt(in)) as torch.nn.Linear's default, drawn from seed s's own generator.
- ``clip_grad_norms``: per seed and network, g_s <- g_s min(1, c / (||g_s|| + 1e-6)) (torch's clip_grad_norm_).
- ``SeedAdam``: Adam (Kingma & Ba 2015) in torch.optim.Adam's form, m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2,
  theta -= lr / (1 - b1^t) m / (sqrt(v) / sqrt(1 - b2^t) + eps), elementwise, so stacking seeds changes nothing;
  each seed keeps its own step count t (int64; the bias corrections 1 - b^t in float64, then cast), and a seed whose loss was non-finite is left untouched by that step.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch
from torch import nn

Generators = list[torch.Generator]


def seeded_randn(gens: Generators, *shape: int) -> torch.Tensor:
    """[S, *shape] standard normal draws, row s from generator s."""
    return torch.stack([torch.randn(shape, generator=g, device=g.device) for g in gens])


def seeded_rand(gens: Generators, *shape: int) -> torch.Tensor:
    """[S, *shape] uniform(0, 1) draws, row s from generator s."""
    return torch.stack([torch.rand(shape, generator=g, device=g.device) for g in gens])


class SeedLinear(nn.Module):
    """One affine layer per seed (module docstring); the weights optionally zero (a policy's last layer)."""

    def __init__(self, inp: int, out: int, gens: Generators, zero: bool = False):
        super().__init__()
        bound = 1 / math.sqrt(inp)
        w, b = (seeded_rand(gens, inp, out) * 2 - 1) * bound, (seeded_rand(gens, out) * 2 - 1) * bound
        self.weight = nn.Parameter(w.zero_() if zero else w)
        self.bias = nn.Parameter(b.zero_() if zero else b)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(x.shape[0], -1, x.shape[-1])
        return torch.baddbmm(self.bias[:, None], flat, self.weight).reshape(*x.shape[:-1], -1)


def mlp(inp: int, out: int, hidden: int, gens: Generators, zero_last: bool = False) -> nn.Sequential:
    """Two tanh hidden layers of width ``hidden`` per seed; the last layer optionally zero-initialised."""
    return nn.Sequential(SeedLinear(inp, hidden, gens), nn.Tanh(), SeedLinear(hidden, hidden, gens), nn.Tanh(),
                         SeedLinear(hidden, out, gens, zero_last))


def _per_seed(x: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """[S] values shaped to broadcast against ``like`` [S, ...]."""
    return x.view(-1, *([1] * (like.dim() - 1)))


@torch.no_grad()
def clip_grad_norms(params: Iterable[nn.Parameter], max_norm: float) -> None:
    """Scale each seed's gradient of one network to norm at most ``max_norm``."""
    grads = [q.grad for q in params if q.grad is not None]
    norm = torch.stack([(g**2).flatten(1).sum(1) for g in grads]).sum(0).sqrt()
    coef = (max_norm / (norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(_per_seed(coef, g))


class SeedAdam:
    """Adam over seed-stacked parameters with per-seed step counts (module docstring)."""

    def __init__(self, params: Iterable[nn.Parameter], lr: float, seeds: int, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8):
        self.params, self.lr, self.betas, self.eps = list(params), lr, betas, eps
        self.m = [torch.zeros_like(q) for q in self.params]
        self.v = [torch.zeros_like(q) for q in self.params]
        self.t = torch.zeros(seeds, dtype=torch.int64, device=self.params[0].device)

    def zero_grad(self) -> None:
        for q in self.params:
            q.grad = None

    @torch.no_grad()
    def step(self, active: torch.Tensor) -> None:
        """One Adam step for the seeds where ``active`` [S] is true."""
        b1, b2 = self.betas
        self.t += active.to(torch.int64)
        t = self.t.clamp(min=1).to(torch.float64)
        dtype = self.params[0].dtype
        bc1, sqrt_bc2 = (1 - b1**t).to(dtype), (1 - b2**t).sqrt().to(dtype)
        for q, m, v in zip(self.params, self.m, self.v, strict=True):
            a, g = _per_seed(active, q), q.grad
            m.copy_(torch.where(a, b1 * m + (1 - b1) * g, m))
            v.copy_(torch.where(a, b2 * v + (1 - b2) * g * g, v))
            update = self.lr / _per_seed(bc1, q) * m / (v.sqrt() / _per_seed(sqrt_bc2, q) + self.eps)
            q.sub_(torch.where(a, update, 0.0))
