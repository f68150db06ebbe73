"""The Euclidean baseline: the modern Hopfield network (Ramsauer et al. 2021, ICLR, "Hopfield Networks is All You
Need").

Memories M (N, d) (rows m_i), state xi (d):
    E(xi) = -(1/beta) log sum_i exp(beta m_i . xi) + 1/2 ||xi||^2,
    xi <- M^T softmax(beta M xi)            (the CCCP update; it never increases E).
The retrieved memory is the one nearest to the final state in Euclidean distance.
"""

from __future__ import annotations

import torch


def mhn_energy(xi: torch.Tensor, memories: torch.Tensor, beta: float) -> torch.Tensor:
    """E(xi) for a batch of states xi (Q, d): -(1/beta) logsumexp(beta M xi) + 1/2 ||xi||^2."""
    return -torch.logsumexp(beta * xi @ memories.T, dim=1) / beta + 0.5 * (xi**2).sum(dim=1)


def mhn_update(xi: torch.Tensor, memories: torch.Tensor, beta: float) -> torch.Tensor:
    """One CCCP step xi <- softmax(beta xi M^T) M for a batch of states."""
    return torch.softmax(beta * xi @ memories.T, dim=1) @ memories


def mhn_retrieve(queries: torch.Tensor, memories: torch.Tensor, beta: float, steps: int) -> torch.Tensor:
    """Index of the memory nearest to the state after ``steps`` updates from each query."""
    xi = queries
    for _ in range(steps):
        xi = mhn_update(xi, memories, beta)
    return torch.cdist(xi, memories).argmin(dim=1)
