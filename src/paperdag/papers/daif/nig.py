"""The paper's critic: a Bayesian quantile regression head with a Normal-Inverse-Gamma posterior per quantile
(deep evidential regression, Amini, Schwarting, Soleimany & Rus 2020, NeurIPS, applied to each return quantile).

For every action a and quantile k (level tau_k) one MLP outputs the NIG parameters (gamma, nu, alpha, beta) of a
belief over the quantile's location mu and noise sigma^2: sigma^2 ~ Inv-Gamma(alpha, beta), mu | sigma^2 ~
N(gamma, sigma^2 / nu), with nu > 0, alpha > 1, beta > 0 (softplus links). Its moments are
    E[mu] = gamma,    aleatoric E[sigma^2] = beta / (alpha - 1),    epistemic Var[mu] = beta / (nu (alpha - 1)).
Training, per critic and transition with Bellman targets y_j = r + gamma_d (1 - d) gamma_target(s', a*)_j:
- gamma_k regresses to the tau_k-quantile of the targets with QR-DQN's quantile Huber loss (quantile.py);
- (nu, alpha, beta)_k are fitted to a posterior draw of the target of the same level,
      y~_k = r + gamma_d (1 - d) mu~_k,   mu~_k ~ St(2 alpha', gamma', beta' / (nu' alpha'))
  (the marginal posterior of the successor's quantile location under the target network's NIG at (s', a*)), by
      L_NIG = -log St(y~_k; gamma_k, beta (1 + nu) / (nu alpha), 2 alpha) + reg |y~_k - gamma_k| (2 nu + alpha),
  the negative log marginal likelihood of one observation under the NIG (a Student-t) plus the evidence
  regulariser, with gamma_k held fixed (it is the quantile loss's estimate). A quantile whose targets keep
  agreeing with it accumulates evidence nu, alpha and its epistemic variance shrinks; one whose successor is still
  uncertain keeps it, as the draw carries that uncertainty back one step (the NIG counterpart of an ensemble member
  bootstrapping from its own target network: deep exploration).
Action: the same expected free energy as the ensemble agent (free_energy.py), with the NIG's epistemic variance
v_k = beta_k / (nu_k (alpha_k - 1)) in place of the ensemble's disagreement and the spread of the quantiles
gamma_1..K as the aleatoric variance:
    G(s, a) = -(1/K) sum_k gamma_k - lambda (1 / 2K) sum_k log(1 + v_k / (Var_k gamma_k + sigma_0^2)).
"""

from __future__ import annotations

import copy
import math

import numpy as np
import torch
from torch.nn import functional as F

from .agents import Batch
from .networks import BatchedMLP
from .quantile import quantile_huber_loss

EVIDENCE_FLOOR = 1e-6  # keeps nu, beta > 0 and alpha > 1 strictly (float round-off of softplus near 0)


def nig_parameters(raw: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """raw [..., 4] -> gamma, nu = softplus + floor, alpha = 1 + softplus + floor, beta = softplus + floor."""
    gamma, nu, alpha, beta = raw.unbind(-1)
    return (gamma, F.softplus(nu) + EVIDENCE_FLOOR, 1 + F.softplus(alpha) + EVIDENCE_FLOOR,
            F.softplus(beta) + EVIDENCE_FLOOR)


def epistemic_variance(nu: torch.Tensor, alpha: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
    """Var[mu] = beta / (nu (alpha - 1)) under NIG(gamma, nu, alpha, beta)."""
    return beta / (nu * (alpha - 1))


def evidential_loss(y: torch.Tensor, gamma: torch.Tensor, nu: torch.Tensor, alpha: torch.Tensor,
                    beta: torch.Tensor, reg: float) -> torch.Tensor:
    """Elementwise -log St(y; gamma, beta (1 + nu) / (nu alpha), 2 alpha) + reg |y - gamma| (2 nu + alpha); with
    Omega = 2 beta (1 + nu) the NLL is 0.5 log(pi / nu) - alpha log Omega + (alpha + 0.5) log(nu (y - gamma)^2 +
    Omega) + log Gamma(alpha) - log Gamma(alpha + 0.5)."""
    omega = 2 * beta * (1 + nu)
    nll = (0.5 * torch.log(math.pi / nu) - alpha * torch.log(omega) + (alpha + 0.5) * torch.log(nu * (y - gamma)**2
           + omega) + torch.lgamma(alpha) - torch.lgamma(alpha + 0.5))
    return nll + reg * (y - gamma).abs() * (2 * nu + alpha)


def nig_free_energy(gamma: torch.Tensor, variance: torch.Tensor, lam: float, noise_floor: float) -> torch.Tensor:
    """G(s, a) = -mean_k gamma_k - lambda (1 / 2K) sum_k log(1 + v_k / (Var_k gamma_k + sigma_0^2));
    gamma, variance: [..., A, K] -> [..., A]."""
    aleatoric = gamma.var(dim=-1, unbiased=False).unsqueeze(-1)
    ig = 0.5 * torch.log1p(variance / (aleatoric + noise_floor)).mean(-1)
    return -gamma.mean(-1) - lam * ig


class NIGCritic(torch.nn.Module):
    """``critics`` independent MLPs x -> NIG(gamma, nu, alpha, beta) per (action, quantile):
    [critics, n, d] -> 4 tensors [critics, n, actions, atoms]."""

    def __init__(self, critics: int, d_in: int, hidden: int, actions: int, atoms: int,
                 generator: torch.Generator) -> None:
        super().__init__()
        self.actions, self.atoms = actions, atoms
        self.net = BatchedMLP(critics, d_in, hidden, actions * atoms * 4, generator)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        return nig_parameters(self.net(x).view(*x.shape[:2], self.actions, self.atoms, 4))


class NIGLearner:
    """One NIG quantile critic per seed (one batched forward/backward), bootstrapping through the agent's own next
    action a* = argmin_a G_target(s', a) of its target network."""

    def __init__(self, seeds: int, obs_dim: int, actions: int, atoms: int, hidden: int, lr: float, gamma: float,
                 kappa: float, lam: float, noise_floor: float, reg: float, generator: torch.Generator,
                 rng: np.random.Generator, device: str) -> None:
        self.seeds, self.gamma, self.kappa, self.lam, self.noise_floor, self.reg = (seeds, gamma, kappa, lam,
                                                                                   noise_floor, reg)
        self.rng = rng
        self.online = NIGCritic(seeds, obs_dim, hidden, actions, atoms, generator).to(device)
        self.target = copy.deepcopy(self.online).requires_grad_(False)
        self.optimizer = torch.optim.Adam(self.online.parameters(), lr=lr, foreach=True)

    def free_energy(self, obs: torch.Tensor) -> torch.Tensor:
        """G(s, a) for one observation per seed: obs [S, d] -> [S, A]."""
        gamma, nu, alpha, beta = self.online(obs.unsqueeze(1))
        return nig_free_energy(gamma[:, 0], epistemic_variance(nu, alpha, beta)[:, 0], self.lam, self.noise_floor)

    def values(self, obs: torch.Tensor) -> torch.Tensor:
        """The quantiles gamma as a one-member posterior, [S, 1, A, K] (what the greedy evaluation reads)."""
        return self.online(obs.unsqueeze(1))[0]

    def loss(self, b: Batch) -> torch.Tensor:
        """Sum over critics of the mean (quantile Huber loss of gamma to the targets' mean + mean_k evidential loss
        of quantile k to a posterior draw of its target)."""
        gamma, nu, alpha, beta = self.online(b.obs)  # each [S, n, A, K]
        index = b.action[..., None, None].expand(-1, -1, 1, gamma.shape[-1])
        gamma, nu, alpha, beta = (t.gather(2, index).squeeze(2) for t in (gamma, nu, alpha, beta))
        with torch.no_grad():
            zt, nu_t, alpha_t, beta_t = self.target(b.next_obs)
            g = nig_free_energy(zt, epistemic_variance(nu_t, alpha_t, beta_t), self.lam, self.noise_floor)
            best = g.argmin(-1)[..., None, None].expand(-1, -1, 1, zt.shape[-1])
            zt, nu_t, alpha_t, beta_t = (t.gather(2, best).squeeze(2) for t in (zt, nu_t, alpha_t, beta_t))
            t = torch.as_tensor(self.rng.standard_t(2 * alpha_t.cpu().numpy()), dtype=zt.dtype, device=zt.device)
            draw = zt + t * torch.sqrt(beta_t / (nu_t * alpha_t))
            keep = self.gamma * (1 - b.done[..., None])
            y, y_draw = b.reward[..., None] + keep * zt, b.reward[..., None] + keep * draw
        qr = quantile_huber_loss(gamma, y, self.kappa)
        nig = evidential_loss(y_draw, gamma.detach(), nu, alpha, beta, self.reg).mean(-1)
        return (qr + nig).mean(-1).sum()

    def update(self, b: Batch) -> float:
        """One Adam step on ``loss``; returns the loss per critic."""
        loss = self.loss(b)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        return loss.item() / self.seeds

    def sync_target(self) -> None:
        """theta_target <- theta."""
        self.target.load_state_dict(self.online.state_dict())

    def act(self, obs: np.ndarray, device: str) -> np.ndarray:
        """a_t = argmin_a G(s_t, a) per seed."""
        with torch.no_grad():
            return self.free_energy(torch.as_tensor(obs, device=device)).argmin(-1).cpu().numpy()
