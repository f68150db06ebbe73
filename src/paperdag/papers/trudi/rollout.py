"""Rollouts of a policy in a batched simulator, generalised advantage estimation, and evaluation.

GAE (Schulman et al. 2016): delta_t = r_t + gamma V(s_{t+1}) - V(s_t), A_t = sum_l (gamma lambda)^l delta_{t+l},
returns R_t = A_t + V(s_t); the fixed horizon is a time limit, so the last state is bootstrapped with V(s_H).
Policies and value networks hold S seeds (nets.py): a rollout runs n environments per seed, [S, n], seed s's initial
states and noise drawn from gens[s].
"""

from __future__ import annotations

import torch
from torch import nn

from .envs import SPECS, make_env
from .nets import Generators
from .policies import DiffusionPolicy, GaussianPolicy

Policy = DiffusionPolicy | GaussianPolicy


@torch.no_grad()
def rollout(env_name: str, n: int, policy: Policy, value: nn.Module, gens: Generators, device: str,
            reward_scale: float) -> dict[str, torch.Tensor]:
    """One episode in each of n environments per seed: obs [H, S, n, d], chains [H, S, n, K + 1, A], scaled rewards
    [H, S, n], values [H + 1, S, n] and the unscaled episode return per environment [S, n]."""
    env = make_env(env_name, n, device)
    obs, rows = env.reset(gens), []
    for _ in range(SPECS[env_name].horizon):
        chain = policy.sample(obs, gens)
        nxt, reward = env.step(chain[..., -1, :])
        rows.append((obs, chain, reward, value(obs).squeeze(-1)))
        obs = nxt
    o, c, r, v = (torch.stack(x) for x in zip(*rows, strict=True))
    return {"obs": o, "chain": c, "reward": r * reward_scale, "value": torch.cat([v, value(obs).squeeze(-1)[None]]),
            "episode_return": r.sum(0)}


def gae(reward: torch.Tensor, value: torch.Tensor, gamma: float, lam: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(A, R) of the module docstring for rewards [H, n] and values [H + 1, n]."""
    delta = reward + gamma * value[1:] - value[:-1]
    adv, running = torch.zeros_like(reward), torch.zeros_like(reward[0])
    for t in reversed(range(len(reward))):
        running = delta[t] + gamma * lam * running
        adv[t] = running
    return adv, adv + value[:-1]


@torch.no_grad()
def episode_returns(env_name: str, n: int, policy: Policy, gens: Generators, device: str,
                    deterministic: bool) -> torch.Tensor:
    """Undiscounted return [S, n] of n episodes per seed with stochastic or deterministic (noise-free chain / mean)
    sampling."""
    env = make_env(env_name, n, device)
    obs, total = env.reset(gens), 0.0
    for _ in range(SPECS[env_name].horizon):
        obs, reward = env.step(policy.sample(obs, gens, deterministic)[..., -1, :])
        total = total + reward
    return total


@torch.no_grad()
def constant_action_returns(env_name: str, n: int, gen: torch.Generator, device: str, action: float | None) -> float:
    """Mean return of a trivial policy: the zero action (``action`` = 0) or uniform random actions (None)."""
    env = make_env(env_name, n, device)
    act_dim, total = SPECS[env_name].act_dim, torch.zeros(n, device=device)
    env.reset(gen)
    for _ in range(SPECS[env_name].horizon):
        a = (torch.rand(n, act_dim, generator=gen, device=device) * 2 - 1 if action is None
             else torch.full((n, act_dim), action, device=device))
        total += env.step(a)[1]
    return float(total.mean())


@torch.no_grad()
def detour_sides(policy: Policy, n: int, gens: Generators, device: str,
                 deterministic: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """From the symmetric start (0, -1), per seed: (first actions [S, n, 2], mean x over the episode [S, n], return
    [S, n])."""
    env = make_env("detour", n, device)
    obs, xs, total, first = env.reset(gens, jitter=0.0), [], 0.0, None
    for _ in range(SPECS["detour"].horizon):
        a = policy.sample(obs, gens, deterministic)[..., -1, :]
        first = a.clamp(-1, 1) if first is None else first
        obs, reward = env.step(a)
        xs.append(obs[..., 0])
        total = total + reward
    return first, torch.stack(xs).mean(0), total


@torch.no_grad()
def route_returns(n: int, right_share: float, device: str) -> float:
    """Mean return of a scripted detour batch from the symmetric start: the first round(right_share n) episodes head
    for the waypoint (0.75, 0), the others for (-0.75, 0), then for the goal, at full speed (both legs pass the disk
    at distance 0.6 > R). Compares a one-sided batch (right_share 1) with a split one (1/2) under the congestion."""
    env = make_env("detour", n, device)
    env.reset(torch.Generator(device), jitter=0.0)
    side = torch.where(torch.arange(n, device=device) < round(right_share * n), 1.0, -1.0)
    waypoint, total = torch.stack([0.75 * side, torch.zeros(n, device=device)], 1), torch.zeros(n, device=device)
    for _ in range(SPECS["detour"].horizon):
        target = torch.where((env.p[:, 1] < 0)[:, None], waypoint, env.goal)
        step = target - env.p
        total += env.step(step / step.norm(dim=1, keepdim=True).clamp_min(env.speed * env.dt))[1]
    return float(total.mean())
