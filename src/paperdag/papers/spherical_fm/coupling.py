"""Minibatch couplings of a source batch x0 and a data batch x1 (Tong et al. 2024, TMLR, "Improving and generalizing
flow-based generative models with minibatch optimal transport").

Exact OT with uniform marginals on a square cost matrix C: P = argmin_{P in U(1/n, 1/n)} <P, C>, solved by POT's
network simplex (``ot.emd``). By Birkhoff's theorem an optimal vertex is a permutation matrix / n, so the coupling is
the permutation sigma with P[i, sigma(i)] = 1/n. Costs:
    euclidean  C_ij = ||x0_i - x1_j||^2                          (OT-CFM)
    angular    C_ij = arccos(<x0_i, x1_j> / (||x0_i|| ||x1_j||))  (SOT-CFM, SFM)
"""

from __future__ import annotations

import numpy as np
import ot
import torch

COSTS = ("euclidean", "angular")


def cost_matrix(x0: torch.Tensor, x1: torch.Tensor, cost: str) -> torch.Tensor:
    """C_ij between rows of x0 and x1 for ``cost`` in COSTS (see the module)."""
    if cost == "euclidean":
        return torch.cdist(x0, x1) ** 2
    if cost == "angular":
        cos = (x0 / x0.norm(dim=1, keepdim=True)) @ (x1 / x1.norm(dim=1, keepdim=True)).T
        return torch.arccos(cos.clamp(-1.0, 1.0))
    raise ValueError(f"unknown cost {cost!r} (known: {COSTS})")


def ot_plan(x0: torch.Tensor, x1: torch.Tensor, cost: str) -> np.ndarray:
    """The exact OT plan P (n x n, float64) between uniform measures on the rows of x0 and x1."""
    n = len(x0)
    C = cost_matrix(x0.double(), x1.double(), cost).cpu().numpy()
    return ot.emd(np.full(n, 1.0 / n), np.full(n, 1.0 / n), C)


def ot_permutation(x0: torch.Tensor, x1: torch.Tensor, cost: str) -> torch.Tensor:
    """sigma with x0[sigma[j]] paired to x1[j]: the column-wise argmax of the (permutation) plan."""
    return torch.as_tensor(ot_plan(x0, x1, cost).argmax(axis=0), device=x0.device)
