"""The policy classes: a K-step diffusion policy and a state-independent-std Gaussian policy (PPO's default).

Diffusion policy (DDPM-style chain, Ho et al. 2020; used as an RL policy as in DPPO, Ren et al. 2024): the prior
a_K ~ N(0, s0^2 I), then for t = K..1
    a_{t-1} = mu_theta(a_t, t, s) + sigma_t eps_t,   mu_theta(a_t, t, s) = a_t + f_theta(s, a_t, onehot(t)),
with a fixed geometric schedule sigma_K = sigma_max ... sigma_1 = sigma_min and f_theta's last layer zero at init.
The chain's log-density given s is  log p(a_{0:K} | s) = log N(a_K; 0, s0^2) + sum_t log N(a_{t-1}; mu_t, sigma_t^2)
and the first term does not depend on theta, so ``log_prob`` returns the sum over steps only. The action is a_0.
Deterministic sampling draws a_K and sets eps_t = 0 (the noise-free DDIM-style map a_{t-1} = mu_theta(a_t, t, s)).
Chains are stored in sampling order: chain[..., 0, :] = a_K, ..., chain[..., K, :] = a_0; ``sigmas[k]`` belongs to step
k. Both classes hold S seeds at once (nets.py): states [S, B, obs_dim], chains [S, B, K + 1, act_dim], and seed s's
noise comes from its own generator.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .nets import Generators, mlp, seeded_randn


def gaussian_log_prob(x: torch.Tensor, mu: torch.Tensor, std: torch.Tensor) -> torch.Tensor:
    """log N(x; mu, std^2 I) summed over the last axis: -sum((x - mu)^2 / 2 std^2 + log std + log(2 pi) / 2)."""
    return -(((x - mu) / std) ** 2 / 2 + std.log() + 0.5 * math.log(2 * math.pi)).sum(-1)


class DiffusionPolicy(nn.Module):
    """pi_theta(a | s) as the K-step denoising chain of the module docstring, one network per seed of ``gens``."""

    def __init__(self, obs_dim: int, act_dim: int, hidden: int, steps: int, sigma_max: float, sigma_min: float,
                 prior_std: float, gens: Generators):
        super().__init__()
        self.act_dim, self.steps, self.prior_std = act_dim, steps, prior_std
        self.f = mlp(obs_dim + act_dim + steps, act_dim, hidden, gens, zero_last=True)
        ratio = (sigma_min / sigma_max) ** (1 / max(steps - 1, 1))
        self.register_buffer("sigmas", sigma_max * ratio ** torch.arange(steps, dtype=torch.float32))

    def step_mean(self, obs: torch.Tensor, a: torch.Tensor, k: int | torch.Tensor) -> torch.Tensor:
        """mu_theta(a_t, t, s) = a_t + f_theta(s, a_t, onehot(k)) for chain position k (t = K - k)."""
        k = torch.as_tensor(k, device=a.device).expand(a.shape[:-1])
        return a + self.f(torch.cat([obs, a, nn.functional.one_hot(k, self.steps).to(a.dtype)], -1))

    @torch.no_grad()
    def sample(self, obs: torch.Tensor, gens: Generators, deterministic: bool = False) -> torch.Tensor:
        """A chain [S, B, K + 1, act_dim] for each state [S, B, obs_dim]: a_K from the prior, then K denoising
        steps (seed s's prior and step noise drawn from gens[s], the same draws whether or not deterministic)."""
        noise = seeded_randn(gens, obs.shape[1], self.steps + 1, self.act_dim)
        a = self.prior_std * noise[:, :, 0]
        chain = [a]
        for k in range(self.steps):
            a = self.step_mean(obs, a, k)
            if not deterministic:
                a = a + self.sigmas[k] * noise[:, :, k + 1]
            chain.append(a)
        return torch.stack(chain, -2)

    def means(self, obs: torch.Tensor, chain: torch.Tensor) -> torch.Tensor:
        """Step means [..., K, act_dim]: mu_theta at every stored a_t of the chain (one batched call)."""
        a = chain[..., :-1, :]
        obs = obs[..., None, :].expand(*a.shape[:-1], obs.shape[-1])
        return self.step_mean(obs, a, torch.arange(self.steps, device=a.device))

    def step_log_probs(self, chain: torch.Tensor, mu: torch.Tensor) -> torch.Tensor:
        """Per denoising step log N(a_{t-1}; mu_t, sigma_t^2 I) [..., K] for given step means mu [..., K, act_dim]."""
        return gaussian_log_prob(chain[..., 1:, :], mu, self.sigmas[:, None])

    def log_prob_from_means(self, chain: torch.Tensor, mu: torch.Tensor) -> torch.Tensor:
        """sum_t log N(a_{t-1}; mu_t, sigma_t^2 I) for given step means mu [..., K, act_dim]."""
        return self.step_log_probs(chain, mu).sum(-1)


class GaussianPolicy(nn.Module):
    """pi_theta(a | s) = N(m_theta(s), diag(exp(2 log_std))), log_std a free parameter per seed (Schulman et al.
    2017)."""

    def __init__(self, obs_dim: int, act_dim: int, hidden: int, init_std: float, gens: Generators):
        super().__init__()
        self.act_dim = act_dim
        self.mean = mlp(obs_dim, act_dim, hidden, gens, zero_last=True)
        self.log_std = nn.Parameter(torch.full((len(gens), 1, act_dim), math.log(init_std)))

    @torch.no_grad()
    def sample(self, obs: torch.Tensor, gens: Generators, deterministic: bool = False) -> torch.Tensor:
        """A one-step "chain" [S, B, 1, act_dim]: the mean, plus N(0, std^2) noise unless deterministic."""
        a = self.mean(obs)
        noise = seeded_randn(gens, obs.shape[1], self.act_dim)
        if not deterministic:
            a = a + self.log_std.exp() * noise
        return a[..., None, :]

    def log_prob(self, obs: torch.Tensor, chain: torch.Tensor) -> torch.Tensor:
        """log N(a; m_theta(s), std^2 I) for states [S, B, obs_dim]."""
        return gaussian_log_prob(chain[..., -1, :], self.mean(obs), self.log_std.exp())

    def kl(self, obs: torch.Tensor, mean_old: torch.Tensor, log_std_old: torch.Tensor) -> torch.Tensor:
        """KL(N_old || N_new) per state: sum_i log(s_new / s_old) + (s_old^2 + (m_old - m_new)^2) / 2 s_new^2 - 1/2."""
        s_new, s_old = self.log_std.exp(), log_std_old.exp()
        return ((self.log_std - log_std_old) + (s_old**2 + (mean_old - self.mean(obs)) ** 2) / (2 * s_new**2)
                - 0.5).sum(-1)
