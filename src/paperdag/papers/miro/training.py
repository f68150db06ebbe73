"""Training one generator by flow matching (flow.py): Adam at a constant learning rate, condition dropout, and an
exponential moving average of the weights, theta_ema <- d theta_ema + (1 - d) theta, which is what gets sampled."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from .flow import Condition, VelocityNet, fm_loss


@dataclass(frozen=True)
class Budget:
    """The optimisation budget shared by every method."""

    steps: int
    batch: int
    lr: float
    caption_dropout: float
    ema: float


def train_flow(net: VelocityNet, images: Tensor, cond: Condition, budget: Budget, gen: torch.Generator,
               checkpoints: set[int], on_checkpoint: Callable[[int, VelocityNet], None]) -> VelocityNet:
    """Minimise fm_loss over minibatches of (images, cond), the caption dropped (tokens -> 0) with probability
    ``caption_dropout``; calls on_checkpoint(step, ema_net) after each step in ``checkpoints``; returns the EMA net."""
    ema = copy.deepcopy(net).requires_grad_(False)
    opt = torch.optim.Adam(net.parameters(), lr=budget.lr)
    for step in range(1, budget.steps + 1):
        idx = torch.randint(0, len(images), (budget.batch,), generator=gen, device=gen.device).to(images.device)
        drop = torch.rand(budget.batch, generator=gen, device=gen.device).to(images.device) < budget.caption_dropout
        tokens = torch.where(drop[:, None], 0, cond.tokens[idx])
        loss = fm_loss(net, images[idx], Condition(tokens, cond.rewards[idx], cond.mask[idx]), gen)
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            for pe, p in zip(ema.parameters(), net.parameters(), strict=True):
                pe.lerp_(p, 1 - budget.ema)
        if step in checkpoints:
            on_checkpoint(step, ema)
    return ema
