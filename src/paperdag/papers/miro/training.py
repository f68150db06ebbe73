"""Training one generator per seed by flow matching (flow.py), every seed in one seed-batched network (seeds.py):
Adam at a constant learning rate, condition dropout, and an exponential moving average of the weights,
theta_ema <- d theta_ema + (1 - d) theta, which is what gets sampled.

Seed s starts from its own init and draws from its own generator in the order of a run of that seed alone: per step
the minibatch rows (randint), the caption-dropout coins (rand), x_0 (randn), then t (rand). The batched step
minimises sum_s L_s, so each seed follows its own run's trajectory up to float round-off. On one CPU core this costs
~0.65 of the seed-by-seed loop per seed and step (a width-256 step is matmul-bound; the rest is the optimiser and
per-op overhead, which the batch and the fused Adam kernel share out).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from .flow import Condition, VelocityNet, batched, fm_loss, per_seed


@dataclass(frozen=True)
class Budget:
    """The optimisation budget shared by every method."""

    steps: int
    batch: int
    lr: float
    caption_dropout: float
    ema: float


def draws(gen: torch.Generator, n_rows: int, batch: int, shape: torch.Size,
          caption_dropout: float) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """One seed's draws for one step: minibatch rows, dropped captions, x_0 and t (on the generator's device)."""
    rows = torch.randint(0, n_rows, (batch,), generator=gen, device=gen.device)
    drop = torch.rand(batch, generator=gen, device=gen.device) < caption_dropout
    x0 = torch.randn((batch, *shape), generator=gen, device=gen.device)
    return rows, drop, x0, torch.rand(batch, generator=gen, device=gen.device)


def train_flow(nets: list[VelocityNet], images: Tensor, cond: Condition, budget: Budget, gens: list[torch.Generator],
               checkpoints: set[int], on_checkpoint: Callable[[int, list[VelocityNet]], None]) -> list[VelocityNet]:
    """Minimise fm_loss of every net (seed s: nets[s], drawing from gens[s]) over minibatches of (images, cond), the
    caption dropped (tokens -> 0) with probability ``caption_dropout``; calls on_checkpoint(step, EMA nets) after each
    step in ``checkpoints``; returns the EMA nets."""
    net = batched(nets)
    ema = copy.deepcopy(net).requires_grad_(False)
    opt = torch.optim.Adam(net.parameters(), lr=budget.lr, fused=True)  # one kernel over all parameters
    for step in range(1, budget.steps + 1):
        rows, drop, x0, t = (torch.stack(d).to(images.device) for d in zip(*(
            draws(g, len(images), budget.batch, images.shape[1:], budget.caption_dropout) for g in gens), strict=True))
        tokens = torch.where(drop[..., None], 0, cond.tokens[rows])
        c = Condition(tokens, cond.rewards[rows], cond.mask[rows])
        loss = fm_loss(net, images[rows], c, x0.to(images), t.to(images)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            for pe, p in zip(ema.parameters(), net.parameters(), strict=True):
                pe.lerp_(p, 1 - budget.ema)
        if step in checkpoints:
            on_checkpoint(step, per_seed(ema))
    return per_seed(ema)
