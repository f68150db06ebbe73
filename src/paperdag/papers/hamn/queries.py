"""Noisy queries, the two retrieval models behind one interface, and the noise calibration at depth 2.

Each model reads memories in its own input space: the Euclidean network reads the Euclidean embedding scaled to
unit RMS norm, HAMN reads the tangent vectors v = log_0(p) of the Poincare embedding (mapped back onto the ball by
exp_0 inside HAMN). A query for node i is
    q = x_i + rho * s * z / sqrt(dim),   z ~ N(0, I_dim),
with s the RMS norm of the memories in that input space (s = 1 for the scaled Euclidean embedding), so rho is the
noise-to-signal ratio of the query. The noise level rho of each model is calibrated once, at depth 2, on an
embedding seed and noise draws held out from the evaluation: bisection on rho in [0, rho_max] for the leaf
accuracy of that model to cross ``target``; both models then score about equally at depth 2 by construction.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .hyperbolic_memory import hamn_retrieve, poincare_ball
from .modern_hopfield import mhn_retrieve

MODELS = ("mhn", "hamn")
GEOMETRY = {"mhn": "euclidean", "hamn": "poincare"}


@dataclass(frozen=True)
class Retriever:
    """One model and its settings (MHN: beta, steps; HAMN: also reg, step_size, armijo, backtracks)."""

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
        if self.model == "mhn":
            return mhn_retrieve(queries, memories, self.beta, self.steps), torch.full((len(queries),), float("nan"))
        out = hamn_retrieve(queries, memories, self.beta, self.reg, self.curvature, self.steps, self.step_size,
                            self.armijo, self.backtracks)
        return out.retrieved, out.max_norm


def input_space(model: str, embedding: torch.Tensor, curvature: float) -> torch.Tensor:
    """The memories a model reads: Euclidean embedding / its RMS norm (MHN), or log_0 of the Poincare one (HAMN),
    log_0(p) = artanh(sqrt c ||p||) p / (sqrt c ||p||)."""
    if model == "mhn":
        return embedding / embedding.norm(dim=1).pow(2).mean().sqrt()
    return poincare_ball(curvature).logmap0(embedding)


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


def calibrate_noise(retriever: Retriever, memories: torch.Tensor, nodes: torch.Tensor, z: torch.Tensor,
                    target: float, rho_max: float, iterations: int, chunk: int) -> tuple[float, float]:
    """Bisection on rho for accuracy(rho) = target (accuracy falls as rho grows); returns (rho, accuracy at rho)."""
    lo, hi = 0.0, rho_max
    for _ in range(iterations):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if accuracy(retriever, memories, nodes, mid, z, chunk) >= target else (lo, mid)
    rho = (lo + hi) / 2
    return rho, accuracy(retriever, memories, nodes, rho, z, chunk)
