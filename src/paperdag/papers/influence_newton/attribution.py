"""Influence function (IF) and single Newton step (NS) estimates of leave-T-out parameters, batched over subsets.

With L(theta) = sum_i l_i(theta) (+ ridge), theta_hat = argmin L, H = hess L(theta_hat), a removed set T (|T| = k),
    g_T = sum_{i in T} grad l_i(theta_hat),        H_T = sum_{i in T} hess l_i(theta_hat),
    IF:  theta_IF = theta_hat + H^-1 g_T                      (Cook & Weisberg 1982; Koh & Liang 2017),
    NS:  theta_NS = theta_hat + (H - H_T)^-1 g_T              (one Newton step on the leave-T-out loss from
                                                               theta_hat; Pregibon 1981, Koh et al. 2019).
Subsets are rows of an index tensor ``idx`` (S x k); every function works on all S subsets at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from .glm import Loss


def removal_mask(n: int, idx: Tensor) -> Tensor:
    """W (S x n) with W_si = 0 if point i is in subset s, else 1: the weights of the leave-T-out losses."""
    W = torch.ones(idx.shape[0], n, dtype=torch.float64, device=idx.device)
    return W.scatter_(1, idx, 0.0)


def removal_terms(X: Tensor, y: Tensor, idx: Tensor, theta_hat: Tensor, loss: Loss) -> tuple[Tensor, Tensor]:
    """(g_T, H_T): g_T = sum_{i in T} l'(z_i) x_i (S x d) and H_T = sum_{i in T} l''(z_i) x_i x_i^T (S x d x d)."""
    XT, yT = X[idx], y[idx]  # S x k x d, S x k
    z = XT @ theta_hat
    g = (loss.d1(z, yT).unsqueeze(-1) * XT).sum(1)
    H = (XT * loss.d2(z, yT).unsqueeze(-1)).transpose(1, 2) @ XT
    return g, H


@dataclass(frozen=True)
class Estimates:
    """theta_IF and theta_NS for every subset (S x d), plus the leave-T-out Hessians at theta_hat (S x d x d)."""

    theta_if: Tensor
    theta_ns: Tensor
    hess_out: Tensor


def estimate(X: Tensor, y: Tensor, idx: Tensor, theta_hat: Tensor, H: Tensor, loss: Loss) -> Estimates:
    """theta_IF = theta_hat + H^-1 g_T and theta_NS = theta_hat + (H - H_T)^-1 g_T for each subset T (row of idx)."""
    g, H_T = removal_terms(X, y, idx, theta_hat, loss)
    hess_out = H.unsqueeze(0) - H_T
    theta_if = theta_hat + torch.linalg.solve(H, g.T).T
    theta_ns = theta_hat + torch.linalg.solve(hess_out, g.unsqueeze(-1)).squeeze(-1)
    return Estimates(theta_if=theta_if, theta_ns=theta_ns, hess_out=hess_out)
