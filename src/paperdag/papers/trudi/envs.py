"""Massively parallel simulators as batched torch tensor operations: one ``step`` advances every environment.

Each environment holds a state tensor of shape [n, ...]; ``reset`` draws n initial states from a torch Generator (or
[S, n, ...] from a list of S generators, one batch per training seed) and ``step(a)`` maps actions a in
[-1, 1]^act_dim (clipped) to (obs', reward) for all of them at once, on any device. Episodes have a fixed horizon H
(no early termination), so a rollout is H step calls.

- ``detour`` (bimodal, both modes optimal): a point mass p in R^2 goes from (0, -1) to the goal (0, 1) around a disk
  obstacle of radius R at the origin, left or right: p' = p + v dt a, a move into the disk is blocked. The n
  environments of one batch (of one seed) share the two routes as a congestion game: a point in a lane (|x'| >= w,
  lane sign(x')) pays c_crowd times the share of the batch in its lane,
  r = -||p' - g|| - c 1[blocked] - c_crowd s_lane(p'). With shares s_L, s_R the batch pays c_crowd (s_L^2 + s_R^2)
  per step, least at s_L = s_R (and every route change that moves agents to the emptier lane pays): the optimum sends
  half the episodes each way, and a one-sided policy (coverage 0) pays twice the congestion of the split.
  c_crowd = c: a full lane costs as much per step as the obstacle.
- ``pendulum`` (swing-up, the classic-control equations): thdot' = clip(thdot + (3g / 2l sin th + 3 / (m l^2) u) dt,
  +-8), th' = th + thdot' dt, u = 2a; r = -(wrap(th)^2 + 0.1 thdot^2 + 0.001 u^2).
- ``reacher`` (2-link planar arm, links 0.5, velocity control): q' = q + w dt a, tip x(q) = (l1 cos q1 + l2
  cos(q1 + q2), l1 sin q1 + l2 sin(q1 + q2)); r = -||x(q') - target|| - 0.01 ||a||^2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .nets import seeded_rand
from .params import ENVS


def uniform(gen: torch.Generator | list[torch.Generator], n: int, k: int) -> torch.Tensor:
    """U(0, 1) draws [n, k] from one generator, or [S, n, k] from S generators (row s from gens[s])."""
    if isinstance(gen, list):
        return seeded_rand(gen, n, k)
    return torch.rand(n, k, generator=gen, device=gen.device)


@dataclass(frozen=True)
class EnvSpec:
    """Dimensions and horizon of one simulator."""

    name: str
    obs_dim: int
    act_dim: int
    horizon: int


SPECS = {"detour": EnvSpec("detour", 3, 2, 25), "pendulum": EnvSpec("pendulum", 3, 1, 60),
         "reacher": EnvSpec("reacher", 8, 2, 40)}


class Detour:
    """The bimodal point mass (module docstring); obs = (p, t / H)."""

    spec = SPECS["detour"]
    radius, speed, dt, penalty, lane, crowding = 0.5, 1.5, 0.1, 1.0, 0.25, 1.0

    def __init__(self, n: int, device: str = "cpu"):
        self.n, self.device = n, device
        self.goal = torch.tensor([0.0, 1.0], device=device)

    def reset(self, gen: torch.Generator | list[torch.Generator], jitter: float = 0.05) -> torch.Tensor:
        """p0 = (0, -1) + U(-jitter, jitter)^2; jitter = 0 gives the symmetric start of the mode-coverage test."""
        u = uniform(gen, self.n, 2) * 2 - 1
        self.p, self.t = torch.tensor([0.0, -1.0], device=self.device) + jitter * u, 0
        return self.obs()

    def obs(self) -> torch.Tensor:
        return torch.cat([self.p, torch.full((*self.p.shape[:-1], 1), self.t / self.spec.horizon, device=self.device)],
                         -1)

    def step(self, a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        nxt = self.p + self.speed * self.dt * a.clamp(-1, 1)
        blocked = nxt.norm(dim=-1) < self.radius
        self.p = torch.where(blocked[..., None], self.p, nxt)
        self.t += 1
        x = self.p[..., 0]
        side = torch.where(x.abs() >= self.lane, x.sign(), 0.0)
        share = {s: (side == s).to(x.dtype).mean(-1, keepdim=True) for s in (-1, 1)}  # per seed's batch
        crowd = torch.where(side > 0, share[1], torch.where(side < 0, share[-1], 0.0))
        distance = (self.p - self.goal).norm(dim=-1)
        return self.obs(), -distance - self.penalty * blocked.to(x.dtype) - self.crowding * crowd


class Pendulum:
    """Pendulum swing-up (module docstring); obs = (cos th, sin th, thdot / 8)."""

    spec = SPECS["pendulum"]
    g, m, length, dt, max_speed, max_torque = 10.0, 1.0, 1.0, 0.05, 8.0, 2.0

    def __init__(self, n: int, device: str = "cpu"):
        self.n, self.device = n, device

    def reset(self, gen: torch.Generator | list[torch.Generator]) -> torch.Tensor:
        """th ~ U(-pi, pi), thdot ~ U(-1, 1)."""
        u = uniform(gen, self.n, 2) * 2 - 1
        self.th, self.thdot = math.pi * u[..., 0], u[..., 1]
        return self.obs()

    def obs(self) -> torch.Tensor:
        return torch.stack([self.th.cos(), self.th.sin(), self.thdot / self.max_speed], -1)

    def step(self, a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        u = self.max_torque * a[..., 0].clamp(-1, 1)
        wrapped = torch.remainder(self.th + math.pi, 2 * math.pi) - math.pi
        reward = -(wrapped**2 + 0.1 * self.thdot**2 + 0.001 * u**2)
        acc = 3 * self.g / (2 * self.length) * self.th.sin() + 3.0 / (self.m * self.length**2) * u
        self.thdot = (self.thdot + acc * self.dt).clamp(-self.max_speed, self.max_speed)
        self.th = self.th + self.thdot * self.dt
        return self.obs(), reward


class Reacher:
    """2-link reacher (module docstring); obs = (cos q, sin q, target, tip - target)."""

    spec = SPECS["reacher"]
    links, speed, dt = (0.5, 0.5), 2.0, 0.1

    def __init__(self, n: int, device: str = "cpu"):
        self.n, self.device = n, device

    def reset(self, gen: torch.Generator | list[torch.Generator]) -> torch.Tensor:
        """q ~ U(-pi, pi)^2; target at radius U(0.3, 0.9) and angle U(-pi, pi)."""
        u = uniform(gen, self.n, 4)
        self.q = math.pi * (2 * u[..., :2] - 1)
        r, phi = 0.3 + 0.6 * u[..., 2], math.pi * (2 * u[..., 3] - 1)
        self.target = torch.stack([r * phi.cos(), r * phi.sin()], -1)
        return self.obs()

    def tip(self) -> torch.Tensor:
        q1, q12 = self.q[..., 0], self.q.sum(-1)
        (l1, l2) = self.links
        return torch.stack([l1 * q1.cos() + l2 * q12.cos(), l1 * q1.sin() + l2 * q12.sin()], -1)

    def obs(self) -> torch.Tensor:
        return torch.cat([self.q.cos(), self.q.sin(), self.target, self.tip() - self.target], -1)

    def step(self, a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a = a.clamp(-1, 1)
        self.q = self.q + self.speed * self.dt * a
        return self.obs(), -(self.tip() - self.target).norm(dim=-1) - 0.01 * (a**2).sum(-1)


def make_env(name: str, n: int, device: str = "cpu") -> Detour | Pendulum | Reacher:
    """A batch of n environments of kind ``name`` on ``device``."""
    return dict(zip(ENVS, (Detour, Pendulum, Reacher), strict=True))[name](n, device)
