"""The three objectives on the same network: SimCLR, non-negative CL (NCL) and BayesNCL.

* SimCLR (Chen et al. 2020, ICML): f = z / ||z||, loss = NT-Xent(f', f'').
* NCL (Wang, Zhang, Guo & Wang 2024, ICLR, "Non-negative Contrastive Learning"): f = ReLU(z) / ||ReLU(z)||.
* BayesNCL: a gate reads the detached h and outputs keep-probabilities pi_d; a hard mask m_d ~ Bern(pi_d) passes
  gradients to pi by the straight-through estimator m = m_hard + pi - stopgrad(pi); f = normalise(normalise(
  ReLU(z)) * m). The loss is the negative ELBO of the variational view q(m | x) = prod_d Bern(pi_d) against the
  sparse prior p(m) = prod_d Bern(p0): NT-Xent + lambda * mean_batch sum_d KL(Bern(pi_d) || Bern(p0)). At
  evaluation the mask is the posterior mode m_d = 1[pi_d > 1/2].
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


def straight_through_mask(pi: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """m = m_hard + pi - stopgrad(pi), m_hard = 1[u < pi], u ~ U(0, 1): forward value m_hard, d m / d pi = 1."""
    u = torch.rand(pi.shape, generator=g).to(pi.device, pi.dtype)
    return (u < pi).to(pi.dtype) + pi - pi.detach()


def gated(z: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """f = normalise(normalise(ReLU(z)) * m)."""
    return F.normalize(F.normalize(F.relu(z), dim=1) * mask, dim=1)


def features(method: str, z: torch.Tensor, pi: torch.Tensor | None, g: torch.Generator | None) -> torch.Tensor:
    """What the loss compares: normalise(z) (SimCLR), normalise(ReLU z) (NCL), gated(z, m) (BayesNCL; m sampled by
    the straight-through estimator when a generator ``g`` is given, else the posterior mode 1[pi > 1/2])."""
    if method == "simclr":
        return F.normalize(z, dim=1)
    if method == "ncl":
        return F.normalize(F.relu(z), dim=1)
    assert pi is not None, "BayesNCL needs the gate's keep-probabilities"
    mask = straight_through_mask(pi, g) if g is not None else (pi > 0.5).to(z.dtype)
    return gated(z, mask)
