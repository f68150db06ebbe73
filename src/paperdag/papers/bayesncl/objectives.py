"""The three objectives on the same network: SimCLR, non-negative CL (NCL) and BayesNCL.

* SimCLR (Chen et al. 2020, ICML): f = z / ||z||, loss = NT-Xent(f', f'').
* NCL (Wang, Zhang, Guo & Wang 2024, ICLR, "Non-negative Contrastive Learning"): f = ReLU(z) / ||ReLU(z)||.
* BayesNCL: a gate reads the detached h and outputs keep-probabilities pi_d; the hard mask is the posterior mode
  m_d = 1[pi_d > 1/2], passing gradients to pi by the straight-through estimator m = m_hard + pi - stopgrad(pi) (the
  released gate: Cui-Peng-624/BayesNCL solo/methods/simclr.py, gate_type "STE", gate_threshold 0.5); f = normalise(
  normalise(ReLU(z)) * m). The loss is the negative ELBO of the variational view q(m | x) = prod_d Bern(pi_d)
  against the sparse prior p(m) = prod_d Bern(p0): NT-Xent + lambda * mean_batch sum_d KL(Bern(pi_d) || Bern(p0)).
  Training and evaluation use the same mask.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

METHODS = ("simclr", "ncl", "bayesncl")


def nt_xent(a: torch.Tensor, b: torch.Tensor, temperature: float) -> torch.Tensor:
    """NT-Xent over the 2N views u = [a; b] (rows unit-normalised): mean_i -log( exp(u_i . u_j(i) / t) /
    sum_{k != i} exp(u_i . u_k / t) ), j(i) the other view of the same image."""
    u = torch.cat([a, b])
    n = len(a)
    logits = u @ u.T / temperature
    logits = logits.masked_fill(torch.eye(2 * n, dtype=torch.bool, device=u.device), float("-inf"))
    target = torch.cat([torch.arange(n, 2 * n), torch.arange(n)]).to(u.device)
    return F.cross_entropy(logits, target)


def bernoulli_kl(pi: torch.Tensor, p0: float) -> torch.Tensor:
    """KL(Bern(pi) || Bern(p0)) = pi log(pi / p0) + (1 - pi) log((1 - pi) / (1 - p0)), elementwise."""
    return pi * (pi / p0).log() + (1 - pi) * ((1 - pi) / (1 - p0)).log()


def threshold_mask(pi: torch.Tensor) -> torch.Tensor:
    """m = 1[pi > 1/2] + pi - stopgrad(pi): forward value the posterior mode, d m / d pi = 1."""
    return (pi > 0.5).to(pi.dtype) + pi - pi.detach()


def gated(z: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """f = normalise(normalise(ReLU(z)) * m)."""
    return F.normalize(F.normalize(F.relu(z), dim=1) * mask, dim=1)


def features(method: str, z: torch.Tensor, pi: torch.Tensor | None) -> torch.Tensor:
    """What the loss compares: normalise(z) (SimCLR), normalise(ReLU z) (NCL), gated(z, threshold_mask(pi))
    (BayesNCL)."""
    if method == "simclr":
        return F.normalize(z, dim=1)
    if method == "ncl":
        return F.normalize(F.relu(z), dim=1)
    assert pi is not None, "BayesNCL needs the gate's keep-probabilities"
    return gated(z, threshold_mask(pi))
