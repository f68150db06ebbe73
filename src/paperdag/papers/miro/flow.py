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
A VelocityNet built with ``n_seeds`` holds that many independent networks (seeds.py) and maps inputs with a leading
seed axis, (S, B, ...) -> (S, B, ...); training uses it to step every seed at once, sampling uses one seed at a time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .scenes import VOCAB
from .seeds import embedding, layer_norm, linear, seed_state, stack

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

    def __init__(self, width: int, n_seeds: int | None) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width, elementwise_affine=False)
        self.film = linear(width, 2 * width, n_seeds)
        self.mlp = nn.Sequential(linear(width, width, n_seeds), nn.SiLU(), linear(width, width, n_seeds))

    def forward(self, h: Tensor, emb: Tensor) -> Tensor:
        scale, shift = self.film(emb).chunk(2, -1)
        return h + self.mlp((1 + scale) * self.norm(h) + shift)


class VelocityNet(nn.Module):
    """An MLP velocity field on flattened images with FiLM conditioning on (t, caption, r * m, m); ``n_seeds``
    independent copies of it when n_seeds is set (module docstring)."""

    def __init__(self, image_dim: int, width: int, depth: int, n_rewards: int, n_seeds: int | None = None) -> None:
        super().__init__()
        self.spec, self.n_seeds = (image_dim, width, depth, n_rewards), n_seeds
        self.inp = linear(image_dim, width, n_seeds)
        self.words = nn.ModuleList(embedding(v + 1, width, n_seeds) for v in VOCAB)
        self.reward = nn.Sequential(linear(2 * n_rewards, width, n_seeds), nn.SiLU(), linear(width, width, n_seeds))
        self.time = nn.Sequential(linear(32, width, n_seeds), nn.SiLU(), linear(width, width, n_seeds))
        self.blocks = nn.ModuleList(Block(width, n_seeds) for _ in range(depth))
        self.out = nn.Sequential(layer_norm(width, n_seeds), linear(width, image_dim, n_seeds))

    def forward(self, x: Tensor, t: Tensor, c: Condition) -> Tensor:
        freqs = torch.exp(torch.arange(16, device=x.device) * (math.log(1000.0) / 15))
        ang = t[..., None] * freqs * math.pi
        emb = self.time(torch.cat([ang.sin(), ang.cos()], -1))
        emb = emb + sum(w(c.tokens[..., k]) for k, w in enumerate(self.words))
        emb = nn.functional.silu(emb + self.reward(torch.cat([c.rewards * c.mask, c.mask], -1)))
        h = self.inp(x.flatten(-3))
        for block in self.blocks:
            h = block(h, emb)
        return self.out(h).view_as(x)


def velocity(net: VelocityNet, x: Tensor, t: Tensor, c: Condition) -> Tensor:
    """v = (x1_hat - x) / max(1 - t, T_MIN): the network predicts the clean image x1_hat (x-prediction), so every
    component of the noise that the width-limited MLP cannot represent is removed rather than carried along."""
    return (net(x, t, c) - x) / (1 - t).clamp(min=T_MIN)[..., None, None, None]


def load_net(state: dict[str, Tensor], prefix: str, image_dim: int, width: int, depth: int,
             n_rewards: int) -> VelocityNet:
    """A VelocityNet with the weights stored under ``prefix`` in ``state``."""
    net = VelocityNet(image_dim, width, depth, n_rewards).to(next(iter(state.values())).device)
    net.load_state_dict({k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)})
    return net.eval()


def batched(nets: list[VelocityNet]) -> VelocityNet:
    """One seed-batched VelocityNet whose seed s holds the weights of nets[s]."""
    net = VelocityNet(*nets[0].spec, n_seeds=len(nets)).to(next(nets[0].parameters()).device)
    stack(net, nets)
    return net


def per_seed(net: VelocityNet) -> list[VelocityNet]:
    """The seed-batched ``net`` as one VelocityNet per seed (copies of its weights)."""
    nets = [VelocityNet(*net.spec).to(net.inp.weight.device) for _ in range(net.n_seeds)]
    for s, n in enumerate(nets):
        n.load_state_dict(seed_state(net, s))
    return nets


def fm_loss(net: VelocityNet, x1: Tensor, c: Condition, x0: Tensor, t: Tensor) -> Tensor:
    """Monte Carlo estimate of L over the batch (x1, c) at the draws x_0 ~ N(0, I) (shaped as x1) and t ~ U(0, 1)
    (one per image); with a leading seed axis, one estimate per seed (shape (S,))."""
    tb = t[..., None, None, None]
    xt = (1 - tb) * x0 + tb * x1
    return ((velocity(net, xt, t, c) - (x1 - x0)) ** 2).flatten(-3).mean((-2, -1))


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
