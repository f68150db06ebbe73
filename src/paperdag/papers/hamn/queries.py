"""Noisy queries, the retrieval models behind one interface, and the noise calibration at depth 2.

Each model reads memories in its own input space: the Euclidean networks read the Euclidean embedding scaled to
unit RMS norm (``mhn_normed``: each row scaled to unit norm), HAMN reads the tangent vectors v = log_0(p) of the
Poincare embedding (mapped back onto the ball by exp_0 inside HAMN). A query for node i is
    q = x_i + rho * s * z / sqrt(dim),   z ~ N(0, I_dim),
with s the RMS norm of the memories in that input space (s = 1 for the scaled Euclidean embedding), so rho is the
noise-to-signal ratio of the query. The noise level rho of each model is calibrated once, at depth 2, on
embedding seeds and noise draws held out from the evaluation: bisection on rho in [0, rho_max] for the leaf
accuracy of that model, pooled over the calibration seeds, to cross ``target``; all models then score about equally
at depth 2 by construction.

Inverse temperature, one rule for every memory (``storage_beta``): with s_j(xi) the memory's score of pattern j
(dot product m_j . xi; -||xi - m_j||^2 / 2; HAMN c <L(p_j), L(xi)>_L = -cosh(sqrt c d)), the storage gap of a cell is
    Delta = min_i [s_i(m_i) - max_(j != i) s_j(m_i)],
and beta = max(beta_model, log((N - 1) w / (1 - w)) / Delta) is the least beta (not below the model's own) at which
a stored pattern queried with itself keeps at least the softmax weight w on itself, whatever the other N - 1 scores.
Where Delta <= 0 (Ramsauer's MHN on patterns of unequal norm: a longer pattern outscores a stored one at its own
position) no beta stores the cell and beta_model is kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch

from .hyperbolic_memory import energy_terms, hamn_retrieve, poincare_ball
from .modern_hopfield import EUCLIDEAN_MEMORIES, mhn_retrieve

MODELS = (*EUCLIDEAN_MEMORIES, "hamn")
GEOMETRY = {**dict.fromkeys(EUCLIDEAN_MEMORIES, "euclidean"), "hamn": "poincare"}


@dataclass(frozen=True)
class Retriever:
    """One model and its settings (the Euclidean memories: beta, steps; HAMN: also reg, step_size, armijo,
    backtracks)."""

    model: str
    curvature: float
    beta: float
    steps: int
    reg: float = 0.0
    step_size: float = 0.0
    armijo: float = 0.0
    backtracks: int = 0

    def retrieve(self, queries: torch.Tensor, memories: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(index of the retrieved memory, largest sqrt(c) ||xi|| over HAMN's iterates or NaN for MHN) per query."""
        if self.model in EUCLIDEAN_MEMORIES:
            return (mhn_retrieve(queries, memories, self.beta, self.steps, self.model == "mhn_distance"),
                    torch.full((len(queries),), float("nan")))
        out = hamn_retrieve(queries, memories, self.beta, self.reg, self.curvature, self.steps, self.step_size,
                            self.armijo, self.backtracks)
        return out.retrieved, out.max_norm


def input_space(model: str, embedding: torch.Tensor, curvature: float) -> torch.Tensor:
    """The memories a model reads: Euclidean embedding / its RMS norm (mhn, mhn_distance), each row / its norm
    (mhn_normed), or log_0 of the Poincare one (HAMN), log_0(p) = artanh(sqrt c ||p||) p / (sqrt c ||p||)."""
    if model == "mhn_normed":
        return embedding / embedding.norm(dim=1, keepdim=True)
    if model in EUCLIDEAN_MEMORIES:
        return embedding / embedding.norm(dim=1).pow(2).mean().sqrt()
    return poincare_ball(curvature).logmap0(embedding)


def scores(model: str, xi: torch.Tensor, memories: torch.Tensor, curvature: float) -> torch.Tensor:
    """s_j(xi) for all (state, memory) pairs: the logits the memory's softmax multiplies by beta."""
    if model == "mhn_distance":
        return -torch.cdist(xi, memories) ** 2 / 2
    if model in EUCLIDEAN_MEMORIES:
        return xi @ memories.T
    ball = poincare_ball(curvature)
    return energy_terms(ball.expmap0(xi, project=False), ball.expmap0(memories, project=False), curvature)[0]


def storage_gap(model: str, memories: torch.Tensor, curvature: float) -> float:
    """Delta = min_i [s_i(m_i) - max_(j != i) s_j(m_i)] over the stored patterns (tangent vectors for HAMN)."""
    s = scores(model, memories, memories, curvature)
    own = s.diagonal().clone()
    return float((own - s.fill_diagonal_(-math.inf).max(dim=1).values).min())


def storage_beta(retriever: Retriever, memories: torch.Tensor, weight: float) -> Retriever:
    """The retriever with beta = max(beta, log((N - 1) w / (1 - w)) / Delta) (unchanged where Delta <= 0)."""
    gap = storage_gap(retriever.model, memories, retriever.curvature)
    if gap <= 0:
        return retriever
    need = math.log((len(memories) - 1) * weight / (1 - weight)) / gap
    return replace(retriever, beta=max(retriever.beta, need))


def leaf_queries(n_leaves: int, n_queries: int, dim: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """(source leaf j mod n_leaves of query j, so every leaf is queried equally often (+-1), and standard normal
    noise z (n_queries, dim))."""
    return torch.arange(n_queries) % n_leaves, torch.randn(n_queries, dim, generator=gen, dtype=torch.float64)


def noisy_queries(memories: torch.Tensor, nodes: torch.Tensor, rho: float, z: torch.Tensor) -> torch.Tensor:
    """q_j = x_(nodes_j) + rho * s * z_j / sqrt(dim), s the RMS norm of the memories."""
    s = memories.norm(dim=1).pow(2).mean().sqrt()
    return memories[nodes] + rho * s * z / memories.shape[1] ** 0.5


def retrieve_all(retriever: Retriever, memories: torch.Tensor, nodes: torch.Tensor, rho: float, z: torch.Tensor,
                 chunk: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Retrieve every noisy query, ``chunk`` at a time: (retrieved memory, largest iterate norm) per query."""
    parts = [retriever.retrieve(noisy_queries(memories, nodes[lo:lo + chunk], rho, z[lo:lo + chunk]), memories)
             for lo in range(0, len(nodes), chunk)]
    return torch.cat([a for a, _ in parts]), torch.cat([m for _, m in parts])


def accuracy(retriever: Retriever, memories: torch.Tensor, nodes: torch.Tensor, rho: float, z: torch.Tensor,
             chunk: int) -> float:
    """Fraction of queries whose retrieved memory is their source leaf."""
    return float((retrieve_all(retriever, memories, nodes, rho, z, chunk)[0] == nodes).double().mean())


CalibrationSet = tuple[Retriever, torch.Tensor, torch.Tensor, torch.Tensor]
"""(retriever, memories, query nodes, noise z) of one calibration cell."""


def pooled_accuracy(sets: list[CalibrationSet], rho: float, chunk: int) -> float:
    """Mean accuracy at noise rho over the calibration cells (equal query counts: the pooled accuracy)."""
    return sum(accuracy(r, m, n, rho, z, chunk) for r, m, n, z in sets) / len(sets)


def calibrate_noise(sets: list[CalibrationSet], target: float, rho_max: float, iterations: int,
                    chunk: int) -> tuple[float, float]:
    """Bisection on rho for pooled accuracy(rho) = target (accuracy falls as rho grows); returns (rho, accuracy)."""
    lo, hi = 0.0, rho_max
    for _ in range(iterations):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if pooled_accuracy(sets, mid, chunk) >= target else (lo, mid)
    rho = (lo + hi) / 2
    return rho, pooled_accuracy(sets, rho, chunk)
