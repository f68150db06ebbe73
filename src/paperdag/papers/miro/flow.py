"""Conditional flow matching (rectified flow; Lipman et al. 2023, Liu et al. 2023) with caption and reward inputs.

Path x_t = (1 - t) x_0 + t x_1, x_0 ~ N(0, I), x_1 a data image in [-1, 1]. The network predicts the clean image
x1_hat(x_t, t, c, r, m) (x-prediction; Li & He 2025) and the velocity is v = (x1_hat - x_t) / max(1 - t, T_MIN);
the loss regresses it on the path's velocity x_1 - x_0:  L = E || v(x_t, t, c, r, m) - (x_1 - x_0) ||^2.
Condition: caption tokens c (0 = empty), reward targets r in [0, 1]^R and a mask m in {0, 1}^R of the rewards the
model is conditioned on (MIRO: all; single-reward: one; no-reward baselines: none, so r m = 0 always).
Guided velocity (classifier-free guidance with a contrast condition):
    v_w = v(x, t, pos) + w (v(x, t, pos) - v(x, t, neg)),
w = 0 is the conditional model; MIRO's neg is (empty caption, every reward at its lowest bin).
Sampling integrates dx/dt = v_w from t = 0 to 1 with ``n_steps`` Euler steps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .scenes import VOCAB

T_MIN = 0.05  # floor of 1 - t in the x-prediction velocity (Li & He 2025, "Back to basics: let denoising
# generative models denoise")


@dataclass(frozen=True)
class Condition:
    """A batch of conditions: tokens (n x 5, long), rewards r (n x R) and mask m (n x R)."""

    tokens: Tensor
    rewards: Tensor
    mask: Tensor

    def cat(self, other: Condition) -> Condition:
        return Condition(*(torch.cat([a, b]) for a, b in zip(vars(self).values(), vars(other).values(), strict=True)))


class Block(nn.Module):
    """h + W2 SiLU(W1 ((1 + scale) LN(h) + shift)), scale and shift from the condition embedding (FiLM)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width, elementwise_affine=False)
        self.film = nn.Linear(width, 2 * width)
        self.mlp = nn.Sequential(nn.Linear(width, width), nn.SiLU(), nn.Linear(width, width))

    def forward(self, h: Tensor, emb: Tensor) -> Tensor:
        scale, shift = self.film(emb).chunk(2, -1)
        return h + self.mlp((1 + scale) * self.norm(h) + shift)


class VelocityNet(nn.Module):
    """An MLP velocity field on flattened images with FiLM conditioning on (t, caption, r * m, m)."""

    def __init__(self, image_dim: int, width: int, depth: int, n_rewards: int) -> None:
        super().__init__()
        self.inp = nn.Linear(image_dim, width)
        self.words = nn.ModuleList(nn.Embedding(v + 1, width) for v in VOCAB)
        self.reward = nn.Sequential(nn.Linear(2 * n_rewards, width), nn.SiLU(), nn.Linear(width, width))
        self.time = nn.Sequential(nn.Linear(32, width), nn.SiLU(), nn.Linear(width, width))
        self.blocks = nn.ModuleList(Block(width) for _ in range(depth))
        self.out = nn.Sequential(nn.LayerNorm(width), nn.Linear(width, image_dim))

    def forward(self, x: Tensor, t: Tensor, c: Condition) -> Tensor:
        freqs = torch.exp(torch.arange(16, device=x.device) * (math.log(1000.0) / 15))
        ang = t[:, None] * freqs[None] * math.pi
        emb = self.time(torch.cat([ang.sin(), ang.cos()], 1))
        emb = emb + sum(w(c.tokens[:, k]) for k, w in enumerate(self.words))
        emb = nn.functional.silu(emb + self.reward(torch.cat([c.rewards * c.mask, c.mask], 1)))
        h = self.inp(x.flatten(1))
        for block in self.blocks:
            h = block(h, emb)
        return self.out(h).view_as(x)


def velocity(net: VelocityNet, x: Tensor, t: Tensor, c: Condition) -> Tensor:
    """v = (x1_hat - x) / max(1 - t, T_MIN): the network predicts the clean image x1_hat (x-prediction), so every
    component of the noise that the width-limited MLP cannot represent is removed rather than carried along."""
    return (net(x, t, c) - x) / (1 - t).clamp(min=T_MIN)[:, None, None, None]


def load_net(state: dict[str, Tensor], prefix: str, image_dim: int, width: int, depth: int,
             n_rewards: int) -> VelocityNet:
    """A VelocityNet with the weights stored under ``prefix`` in ``state``."""
    net = VelocityNet(image_dim, width, depth, n_rewards).to(next(iter(state.values())).device)
    net.load_state_dict({k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)})
    return net.eval()


def fm_loss(net: VelocityNet, x1: Tensor, c: Condition, gen: torch.Generator) -> Tensor:
    """Monte Carlo estimate of L with t ~ U(0, 1) and x_0 ~ N(0, I) drawn from ``gen``."""
    x0 = torch.randn(x1.shape, generator=gen, device=gen.device).to(x1)
    t = torch.rand(len(x1), generator=gen, device=gen.device).to(x1)
    xt = (1 - t[:, None, None, None]) * x0 + t[:, None, None, None] * x1
    return ((velocity(net, xt, t, c) - (x1 - x0)) ** 2).mean()


def guided_velocity(net: VelocityNet, x: Tensor, t: Tensor, pos: Condition, neg: Condition, w: float) -> Tensor:
    """v_w = v(pos) + w (v(pos) - v(neg)); one batched forward pass of both conditions."""
    if w == 0:
        return velocity(net, x, t, pos)
    v_pos, v_neg = velocity(net, torch.cat([x, x]), torch.cat([t, t]), pos.cat(neg)).chunk(2)
    return v_pos + w * (v_pos - v_neg)


@torch.no_grad()
def sample(net: VelocityNet, pos: Condition, neg: Condition, w: float, n_steps: int, shape: tuple[int, ...],
           gen: torch.Generator) -> Tensor:
    """Euler integration of dx/dt = v_w from x_0 ~ N(0, I) (drawn from ``gen``) at t = 0 to t = 1; images in [0, 1]."""
    x = torch.randn((len(pos.tokens), *shape), generator=gen, device=gen.device).to(pos.rewards)
    for k in range(n_steps):
        t = torch.full((len(x),), k / n_steps, device=x.device, dtype=x.dtype)
        x = x + guided_velocity(net, x, t, pos, neg, w) / n_steps
    return ((x + 1) / 2).clamp(0, 1)
