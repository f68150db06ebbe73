"""The Euclidean baselines: the modern Hopfield network (Ramsauer et al. 2021, ICLR, "Hopfield Networks is All You
Need") on the raw patterns, on L2-normalised patterns, and its distance-softmax form.

Memories M (N, d) (rows m_i), state xi (d):
- ``mhn`` (Ramsauer):  E(xi) = -(1/beta) log sum_i exp(beta m_i . xi) + 1/2 ||xi||^2,
                       xi <- M^T softmax(beta M xi)                     (the CCCP update; it never increases E).
  On patterns of unequal norm a long pattern outscores a short one even at the short one's own position
  (m_j . m_j < m_i . m_j), so the memory cannot return every stored pattern from the pattern itself;
- ``mhn_normed``:     the same network on the patterns m_i / ||m_i|| (queries perturb the normalised patterns), so
                       the dot product ranks like the distance;
- ``mhn_distance``:   E(xi) = -(1/beta) log sum_i exp(-beta ||xi - m_i||^2 / 2),
                       xi <- M^T softmax(-beta ||xi - m_i||^2 / 2)       (CCCP = mean shift; never increases E),
  the direct Euclidean counterpart of HAMN's distance-based score -cosh(sqrt c d).
Each retrieves the memory nearest to the final state in Euclidean distance.
"""

from __future__ import annotations

import torch

EUCLIDEAN_MEMORIES = ("mhn", "mhn_normed", "mhn_distance")


def mhn_energy(xi: torch.Tensor, memories: torch.Tensor, beta: float) -> torch.Tensor:
    """E(xi) for a batch of states xi (Q, d): -(1/beta) logsumexp(beta M xi) + 1/2 ||xi||^2."""
    return -torch.logsumexp(beta * xi @ memories.T, dim=1) / beta + 0.5 * (xi**2).sum(dim=1)


def distance_energy(xi: torch.Tensor, memories: torch.Tensor, beta: float) -> torch.Tensor:
    """E(xi) = -(1/beta) logsumexp(-beta ||xi - m_i||^2 / 2) for a batch of states."""
    return -torch.logsumexp(-beta * torch.cdist(xi, memories) ** 2 / 2, dim=1) / beta


def mhn_update(xi: torch.Tensor, memories: torch.Tensor, beta: float) -> torch.Tensor:
    """One CCCP step xi <- softmax(beta xi M^T) M for a batch of states."""
    return torch.softmax(beta * xi @ memories.T, dim=1) @ memories


def distance_update(xi: torch.Tensor, memories: torch.Tensor, beta: float) -> torch.Tensor:
    """One CCCP (mean-shift) step xi <- softmax(-beta ||xi - m_i||^2 / 2) M for a batch of states."""
    return torch.softmax(-beta * torch.cdist(xi, memories) ** 2 / 2, dim=1) @ memories


def mhn_retrieve(queries: torch.Tensor, memories: torch.Tensor, beta: float, steps: int,
                 distance: bool = False) -> torch.Tensor:
    """Index of the memory nearest to the state after ``steps`` updates (dot-product or distance softmax)."""
    update = distance_update if distance else mhn_update
    xi = queries
    for _ in range(steps):
        xi = update(xi, memories, beta)
    return torch.cdist(xi, memories).argmin(dim=1)
