"""Baseline: a neural CAV controller trained only for performance (no certificate), the same architecture as the
certified one."""

from __future__ import annotations

from pathlib import Path

import torch

from paperdag.io import load_tensors

from ..params import PolicyParams, UncertifiedParams
from ..runtime import Log
from .certificate import Policy
from .model import Platoon, simulate

ROLLOUT_FOLLOWERS = 4  # the controller is trained on rollouts of the first (up to) 4 followers


def train_uncertified(pl: Platoon, policy: Policy, lr: float, p: UncertifiedParams, gen: torch.Generator,
                      log: Log) -> None:
    """Train ``policy`` in place for performance only: BPTT through delayed, disturbed platoon rollouts from random
    initial errors (half the box) with uniform disturbances, minimising mean over time, vehicles and rollouts of
    (e_s / S)^2 + (e_v / E)^2."""
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    S, E = pl.box
    scale = torch.tensor([S, E], dtype=torch.float64)
    for it in range(p.steps):
        x0 = (2 * torch.rand(pl.n, 2, generator=gen, dtype=torch.float64) - 1) * scale * 0.5
        w = (2 * torch.rand(p.horizon, pl.n, generator=gen, dtype=torch.float64) - 1) * pl.w_bound
        lead = torch.zeros(p.horizon, dtype=torch.float64)
        traj = simulate(pl, x0, w, lead, policy)
        cost = ((traj / scale) ** 2).sum(-1).mean()
        opt.zero_grad()
        cost.backward()
        opt.step()
        log("perf_cost", float(cost.detach()), it)


def load_uncertified(path: Path, p: PolicyParams) -> Policy:
    """The controller saved (as its state dict) after ``train_uncertified``."""
    policy = Policy(p.hidden, p.u_scale)
    policy.load_state_dict(load_tensors(path))
    return policy
