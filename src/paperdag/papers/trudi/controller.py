"""The tuned simple controller of the RL baseline ladder: a static linear policy a = clip(W [o; 1], -1, 1) found by
basic random search (ARS V1, Mania, Guy & Recht 2018, "Simple random search of static linear policies is competitive
for reinforcement learning", algorithm 1 with the reward-spread step), within the RL methods' own episode budget.

Per seed s (its generator), from W_0 = 0, each iteration draws N directions delta_k ~ N(0, I), plays m episodes with
each of W + nu delta_k and W - nu delta_k (2 N m = the methods' episodes per iteration), and steps
    W <- W + alpha / (N sigma_R) sum_k (r_k^+ - r_k^-) delta_k,
r_k^+- the candidates' mean returns and sigma_R the standard deviation of those 2N returns. The m episodes of one
candidate are one batch of the simulator (the detour's congestion is shared within it). All seeds and candidates run
in one batched computation. The controller is then scored like the methods: the mean return of its deterministic
actions over the evaluation episodes drawn from the same generators as a method's seed (experiment.py).
"""

from __future__ import annotations

import torch

from .envs import SPECS, make_env
from .nets import Generators, seeded_randn


def _split(env: object, seeds: int, candidates: int) -> None:
    """View every per-environment state tensor [S, C * m, ...] of ``env`` as [S, C, m, ...]: candidate c's m
    episodes form one batch."""
    for name, value in vars(env).items():
        if isinstance(value, torch.Tensor) and value.dim() >= 2 and value.shape[0] == seeds:
            setattr(env, name, value.reshape(seeds, candidates, -1, *value.shape[2:]))


def act(weights: torch.Tensor, obs: torch.Tensor) -> torch.Tensor:
    """clip(W [o; 1], -1, 1) for weights [..., A, D + 1] and observations [..., m, D] -> actions [..., m, A]."""
    x = torch.cat([obs, torch.ones_like(obs[..., :1])], -1)
    return torch.einsum("...ad,...md->...ma", weights, x).clamp(-1.0, 1.0)


@torch.no_grad()
def returns(env_name: str, weights: torch.Tensor, episodes: int, gens: Generators, device: str) -> torch.Tensor:
    """Mean undiscounted return [S, C] of each candidate weights[s, c] over ``episodes`` episodes (one batch per
    candidate), initial states drawn from gens[s]."""
    seeds, candidates = weights.shape[:2]
    env = make_env(env_name, candidates * episodes, device)
    env.reset(gens)
    _split(env, seeds, candidates)
    total = 0.0
    for _ in range(SPECS[env_name].horizon):
        obs = env.obs()
        total = total + env.step(act(weights, obs))[1]
    return total.mean(-1)


@torch.no_grad()
def random_search(env_name: str, gens: Generators, iterations: int, episodes_per_iteration: int, directions: int,
                  step: float, noise: float, device: str) -> torch.Tensor:
    """The weights [S, A, D + 1] after ``iterations`` of ARS V1 (module docstring); m = episodes_per_iteration /
    (2 directions) episodes per candidate."""
    spec, seeds = SPECS[env_name], len(gens)
    m = episodes_per_iteration // (2 * directions)
    if m < 1:
        raise ValueError(f"{episodes_per_iteration} episodes per iteration cannot give {directions} directions two "
                         "candidates of one episode each")
    w = torch.zeros(seeds, spec.act_dim, spec.obs_dim + 1, device=device)
    for _ in range(iterations):
        delta = seeded_randn(gens, directions, spec.act_dim, spec.obs_dim + 1)
        cand = torch.cat([w[:, None] + noise * delta, w[:, None] - noise * delta], 1)
        r = returns(env_name, cand, m, gens, device)
        spread = r.std(1, keepdim=True).clamp_min(1e-8)
        gain = (r[:, :directions] - r[:, directions:]) / spread  # [S, N]
        w = w + step / directions * torch.einsum("sk,skad->sad", gain, delta)
    return w


@torch.no_grad()
def controller_returns(env_name: str, seed_ids: list[int], iterations: int, episodes_per_iteration: int,
                       directions: int, step: float, noise: float, eval_episodes: int, device: str) -> list[float]:
    """Per seed (torch seed ``seed_ids[i]``): the searched controller's mean deterministic return over
    ``eval_episodes`` episodes whose initial states come from the methods' evaluation generators (seed + 7)."""
    search = [torch.Generator(device).manual_seed(s + 13) for s in seed_ids]
    w = random_search(env_name, search, iterations, episodes_per_iteration, directions, step, noise, device)
    evaluation = [torch.Generator(device).manual_seed(s + 7) for s in seed_ids]
    return returns(env_name, w[:, None], eval_episodes, evaluation, device)[:, 0].tolist()
