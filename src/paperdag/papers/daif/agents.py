"""The agents on one critic architecture, and their temporal-difference updates.

- QR-DQN (Dabney et al. 2018): K quantiles per action, quantile Huber loss (quantile.py) to the target quantiles
  r + gamma (1 - d) theta_target(s', a*), a* = argmax_a' mean_k theta_target(s', a'), epsilon-greedy.
- DAIF (the paper): M QR-DQN members with randomized priors, each regressing on its own target network (a Bayesian
  critic over return quantiles), acting by a_t = argmin_a G(s_t, a), the expected free energy (free_energy.py) with
  weight lambda; no epsilon, no transition model. Every member bootstraps through the action the agent itself
  would take next, a* = argmin_a G_target(s', a) from the target ensemble: theta_m(s, a) <- r + gamma (1 - d)
  theta_target_m(s', a*). The ensemble's disagreement about the branch it means to explore thus flows back to the
  actions leading there (deep exploration), and no member's own max inflates the mean.
- The lambda = 0 ablations, the same ensemble with G = -E[Z], made to explore as the baselines do:
  ``daif_lam0_eps`` acts epsilon-greedily on the posterior mean (the baselines' schedule; targets as DAIF's, through
  argmax of the target ensemble's mean); ``daif_lam0_ps`` samples one member per episode and acts greedily on it,
  each member bootstrapping through its own argmax (bootstrapped DQN with randomized priors, Osband et al. 2016,
  2018). Only the exploration rule differs from DAIF: lambda IG is replaced by dithering or by posterior sampling.
Every agent uses the same MLP torso width, optimiser, replay, batch and target schedule.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch

from .free_energy import expected_free_energy, pragmatic_value
from .networks import Critic, lookup, tabulate
from .quantile import quantile_huber_loss

AGENT_NAMES = ("daif", "daif_lam0_eps", "daif_lam0_ps", "qrdqn")
Acting = Literal["free_energy", "epsilon_greedy", "posterior_sampling"]


@dataclass(frozen=True)
class AgentSpec:
    """An agent: ensemble size, quantiles per action, prior scale, how it acts, and whether
    its members bootstrap through the ensemble's action (argmin G of the target ensemble) or each its own argmax."""

    name: str
    members: int
    atoms: int
    prior_scale: float
    lam: float  # free-energy weight of G; 0 makes G the negated posterior mean
    acting: Acting
    ensemble_target: bool


@dataclass(frozen=True)
class Batch:
    """Transitions for every (seed, member) critic: obs/next_obs [B, n, d] (long states [B, n] on a finite state
    space), action/reward/done [B, n]."""

    obs: torch.Tensor
    action: torch.Tensor
    reward: torch.Tensor
    next_obs: torch.Tensor
    done: torch.Tensor


class Learner:
    """seeds x members critics trained side by side (independent parameters, one batched forward/backward).

    With ``one_hot`` observations (a finite state space; batches carry the states, networks.py) the frozen functions
    of a TD update are tables (networks.tabulate): the prior p(s) once, the target network Z_target(s') at every
    sync; the update then evaluates only the online network f(s) through its layers."""

    def __init__(self, spec: AgentSpec, seeds: int, obs_dim: int, actions: int, hidden: int, lr: float,
                 gamma: float, kappa: float, noise_floor: float, generator: torch.Generator, device: str,
                 one_hot: bool = False) -> None:
        self.spec, self.seeds, self.gamma, self.kappa, self.noise_floor = spec, seeds, gamma, kappa, noise_floor
        self.online = Critic(seeds * spec.members, obs_dim, hidden, actions, spec.atoms, spec.prior_scale,
                             generator, one_hot).to(device)
        self.target = copy.deepcopy(self.online).requires_grad_(False)
        self.optimizer = torch.optim.Adam(self.online.net.parameters(), lr=lr, foreach=True)
        self.states = obs_dim if one_hot else 0
        critics = seeds * spec.members
        self.prior_table = (tabulate(self.online.prior, critics, obs_dim) if one_hot and spec.prior_scale > 0
                            else None)
        self.target_table: torch.Tensor | None = None

    def values(self, obs: torch.Tensor) -> torch.Tensor:
        """Z for one observation per seed: obs [S, d] -> [S, M, A, K]."""
        x = (obs.argmax(-1) if self.states else obs).repeat_interleave(self.spec.members, dim=0).unsqueeze(1)
        z = self.online(x)[:, 0]
        return z.view(self.seeds, self.spec.members, *z.shape[1:])

    def loss(self, b: Batch) -> torch.Tensor:
        """Sum over critics of the mean quantile Huber TD loss; independent per critic."""
        prior = None if self.prior_table is None else lookup(b.obs, self.prior_table)
        z = self.online(b.obs, prior)  # [B, n, A, K]
        index = b.action[..., None, None].expand(-1, -1, 1, z.shape[-1])
        theta = z.gather(2, index).squeeze(2)  # [B, n, K]
        with torch.no_grad():
            zt = self.target(b.next_obs) if self.target_table is None else lookup(b.next_obs, self.target_table)
            best = self.next_action(zt)[..., None, None].expand(-1, -1, 1, zt.shape[-1])
            target = b.reward[..., None] + self.gamma * (1 - b.done[..., None]) * zt.gather(2, best).squeeze(2)
        return quantile_huber_loss(theta, target, self.kappa).mean(-1).sum()

    def next_action(self, zt: torch.Tensor) -> torch.Tensor:
        """a* per critic and row: argmax_a mean_k theta_target(s', a) per critic (QR-DQN, posterior sampling);
        with ``ensemble_target`` (the members of one seed share a minibatch) argmin_a G(s', a) of the seed's whole
        target ensemble. zt: [B, n, A, K] -> [B, n]."""
        if not self.spec.ensemble_target:
            return zt.mean(-1).argmax(-1)
        m = self.spec.members
        ensemble = zt.view(self.seeds, m, *zt.shape[1:]).transpose(1, 2)  # [S, n, M, A, K]
        g = expected_free_energy(ensemble, self.spec.lam, self.noise_floor)  # [S, n, A]
        return g.argmin(-1).repeat_interleave(m, dim=0)

    def update(self, b: Batch) -> float:
        """One Adam step on ``loss``; returns the loss per critic."""
        loss = self.loss(b)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        return loss.item() / (self.seeds * self.spec.members)

    def sync_target(self) -> None:
        """theta_target <- theta (and its table, with one-hot observations)."""
        self.target.load_state_dict(self.online.state_dict())
        if self.states:
            self.target_table = tabulate(self.target, self.seeds * self.spec.members, self.states)


def select_actions(spec: AgentSpec, z: torch.Tensor, epsilon: float, noise_floor: float,
                   rng: np.random.Generator, member: np.ndarray) -> np.ndarray:
    """One action per seed from z [S, M, A, K]: argmin_a G(s, a) (free energy); argmax_a mean_k theta_mk(s, a) of
    each seed's sampled ``member`` (posterior sampling); epsilon-greedy on E[Z] otherwise."""
    if spec.acting == "free_energy":
        return expected_free_energy(z, spec.lam, noise_floor).argmin(-1).cpu().numpy()
    if spec.acting == "posterior_sampling":
        rows = torch.arange(z.shape[0], device=z.device)
        return z[rows, torch.as_tensor(member, device=z.device)].mean(-1).argmax(-1).cpu().numpy()
    greedy = pragmatic_value(z).argmax(-1).cpu().numpy()
    explore = rng.random(len(greedy)) < epsilon
    return np.where(explore, rng.integers(0, z.shape[-2], size=len(greedy)), greedy)


def greedy_actions(z: torch.Tensor) -> np.ndarray:
    """argmax_a E_q[Z(s, a)]: the exploitation policy every agent is evaluated with."""
    return pragmatic_value(z).argmax(-1).cpu().numpy()


def agent_spec(name: str, quantiles: int, members: int, prior_scale: float, lam: float) -> AgentSpec:
    """The AgentSpec of ``name`` (one of AGENT_NAMES)."""
    return {
        "daif": AgentSpec(name, members, quantiles, prior_scale, lam, "free_energy", ensemble_target=True),
        "daif_lam0_eps": AgentSpec(name, members, quantiles, prior_scale, 0.0, "epsilon_greedy", ensemble_target=True),
        "daif_lam0_ps": AgentSpec(name, members, quantiles, prior_scale, 0.0, "posterior_sampling",
                                  ensemble_target=False),
        "qrdqn": AgentSpec(name, 1, quantiles, 0.0, 0.0, "epsilon_greedy", ensemble_target=False),
    }[name]
