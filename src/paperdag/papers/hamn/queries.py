"""The retrieval models behind one interface, their inverse temperature and query-noise calibrations, and the
decoders of the retrieval ladder.

Each model reads memories in its own input space: the Euclidean networks read the Euclidean embedding scaled to
unit RMS norm (``mhn_normed``: each row scaled to unit norm), HAMN reads the points of the Poincare embedding. Noisy
queries (noise.py) are Gaussian around a Euclidean memory, and for HAMN Gaussian in the space before its map
(``tangent``: around log_0(p), then exp_0) or a wrapped normal around the point of the ball (``wrapped``), at a
noise-to-signal ratio rho.

Finite temperature, one rule for every memory (``calibrate_beta``): in each (b, D) the memory's beta is the smallest
beta in [beta_min, beta_max] (bisection on log beta; noise-free accuracy taken to grow with beta) at which
noise-free retrieval (each stored leaf queried with itself, the memory's dynamics run, the nearest memory read out)
reaches ``target`` pooled over the calibration seeds' embeddings of that (b, D), which no evaluation reuses. At
beta -> infinity every memory is its nearest-neighbour decoder; this beta keeps retrieval at finite temperature.
The beta the memory runs at (``calibrate_beta_noisy``): the smallest beta >= that one with
    A_mem(beta) - chance >= (1 - g) (max(A_ml, A_nn) - chance),
A the pooled accuracy of noisy calibration queries of that (b, D) at the calibrated rho (the memory's, its noise's
ML decoder's and its nearest-neighbour decoder's, on the same queries), chance = 1 / leaves: the memory keeps at
least 1 - g of what its stronger decoder reads from the noise above chance (until the 2026-12-05 afternoon the gap
was absolute, A_mem >= max(A_ml, A_nn) - 0.025, which in deep cells near chance let a memory lose a third of it),
judged by the one-sided lower confidence bound of the per-query differences (since 2026-12-06; before, their mean).

Query noise (``calibrate_noise_on_decoder``): rho of each model and branching is set once at depth 2, on the
calibration seeds, by bisection in [0, rho_max] for the pooled accuracy of the noise's ML decoder to cross
``target`` (until cac8c15 the same bisection ran on the memory's own accuracy).

Decoders: ``nearest_leaf`` (the stored pattern nearest to the query in the memory's geometry, no update: the memory's
zero-temperature, zero-step limit) and ``ml_leaf`` (the noise's maximum-likelihood leaf, noise.log_likelihood).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch

from .hyperbolic_memory import energy_terms, hamn_retrieve
from .modern_hopfield import EUCLIDEAN_MEMORIES, mhn_retrieve
from .noise import log_likelihood, noise_sigma, noisy_queries

MODELS = (*EUCLIDEAN_MEMORIES, "hamn")
GEOMETRY = {**dict.fromkeys(EUCLIDEAN_MEMORIES, "euclidean"), "hamn": "poincare"}


@dataclass(frozen=True)
class Retriever:
    """One model, its query noise (noise.MODES) and its settings (the Euclidean memories: beta, steps; HAMN: also
    reg, step_size, armijo, backtracks)."""

    model: str
    noise: str
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


def input_space(model: str, embedding: torch.Tensor) -> torch.Tensor:
    """The memories a model reads: Euclidean embedding / its RMS norm (mhn, mhn_distance), each row / its norm
    (mhn_normed), or the points of the Poincare embedding (HAMN)."""
    if model == "mhn_normed":
        return embedding / embedding.norm(dim=1, keepdim=True)
    if model in EUCLIDEAN_MEMORIES:
        return embedding / embedding.norm(dim=1).pow(2).mean().sqrt()
    return embedding


def nearest_leaf(model: str, queries: torch.Tensor, memories: torch.Tensor, curvature: float) -> torch.Tensor:
    """Index of the stored pattern nearest to each query in the memory's own geometry (no update): the Euclidean
    distance, or the Poincare distance (the largest c <L(p_i), L(q)>_L = -cosh(sqrt c d))."""
    if model in EUCLIDEAN_MEMORIES:
        return torch.cdist(queries, memories).argmin(dim=1)
    return energy_terms(queries, memories, curvature)[0].argmax(dim=1)


def ml_leaf(noise: str, queries: torch.Tensor, memories: torch.Tensor, rho: torch.Tensor | float,
            curvature: float) -> torch.Tensor:
    """The maximum-likelihood leaf of each query under the noise ``noise`` at ratio rho (equally likely leaves)."""
    sigma = noise_sigma(memories, rho, noise, curvature)
    return log_likelihood(queries, memories, sigma, noise, curvature).argmax(dim=1)


def leaf_queries(n_leaves: int, n_queries: int, dim: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """(source leaf j mod n_leaves of query j, so every leaf is queried equally often (+-1), and standard normal
    noise z (n_queries, dim))."""
    return torch.arange(n_queries) % n_leaves, torch.randn(n_queries, dim, generator=gen, dtype=torch.float64)


@dataclass(frozen=True)
class Decoded:
    """Per query: the memory's retrieved leaf, the largest iterate norm (HAMN), the nearest and the ML leaf."""

    retrieved: torch.Tensor
    max_norm: torch.Tensor
    nearest: torch.Tensor
    ml: torch.Tensor


def decode_all(retriever: Retriever, memories: torch.Tensor, nodes: torch.Tensor, rho: torch.Tensor | float,
               z: torch.Tensor, chunk: int) -> Decoded:
    """Draw every noisy query (noise.noisy_queries) and decode it by the memory and by both decoders, ``chunk``
    queries at a time."""
    rho = torch.as_tensor(rho, dtype=z.dtype, device=z.device).expand(len(nodes))
    c, parts = retriever.curvature, []
    for lo in range(0, len(nodes), chunk):
        sl = slice(lo, lo + chunk)
        q = noisy_queries(memories, nodes[sl], rho[sl], z[sl], retriever.noise, c)
        parts.append((*retriever.retrieve(q, memories), nearest_leaf(retriever.model, q, memories, c),
                      ml_leaf(retriever.noise, q, memories, rho[sl], c)))
    return Decoded(*(torch.cat(col) for col in zip(*parts, strict=True)))


def accuracy(retriever: Retriever, memories: torch.Tensor, nodes: torch.Tensor, rho: float, z: torch.Tensor,
             chunk: int) -> float:
    """Fraction of noisy queries whose retrieved memory is their source leaf."""
    rho_t = torch.full((len(nodes),), rho, dtype=z.dtype, device=z.device)
    hits = [retriever.retrieve(noisy_queries(memories, nodes[lo:lo + chunk], rho_t[lo:lo + chunk], z[lo:lo + chunk],
                                             retriever.noise, retriever.curvature), memories)[0]
            == nodes[lo:lo + chunk] for lo in range(0, len(nodes), chunk)]
    return float(torch.cat(hits).double().mean())


def clean_accuracy(retriever: Retriever, memories: torch.Tensor, stored: torch.Tensor, chunk: int) -> float:
    """Fraction of the stored leaves ``stored`` that the memory retrieves from the stored pattern itself."""
    hits = [retriever.retrieve(memories[stored[lo:lo + chunk]], memories)[0] == stored[lo:lo + chunk]
            for lo in range(0, len(stored), chunk)]
    return float(torch.cat(hits).double().mean())


def probe_leaves(n_leaves: int, most: int) -> torch.Tensor:
    """The stored leaves the beta rule queries in one calibration cell: all of them, or ``most`` evenly spaced."""
    if n_leaves <= most:
        return torch.arange(n_leaves)
    return torch.linspace(0, n_leaves - 1, most).round().long().unique()


def calibrate_beta(retriever: Retriever, cells: list[tuple[torch.Tensor, torch.Tensor]], target: float,
                   beta_min: float, beta_max: float, iterations: int, chunk: int) -> tuple[Retriever, float]:
    """The retriever at the smallest beta in [beta_min, beta_max] (bisection on log beta) whose noise-free accuracy
    pooled over ``cells`` ((memories, probed leaves) of the calibration seeds) reaches ``target``, and that accuracy
    (below target only where beta_max does not reach it)."""
    seen: dict[float, float] = {}

    def pooled(beta: float) -> float:
        if beta not in seen:
            r = replace(retriever, beta=beta)
            seen[beta] = sum(clean_accuracy(r, m, s, chunk) * len(s) for m, s in cells) / sum(len(s) for _, s in cells)
        return seen[beta]

    lo, hi = math.log(beta_min), math.log(beta_max)
    for _ in range(iterations):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if pooled(math.exp(mid)) >= target else (mid, hi)
    return replace(retriever, beta=math.exp(hi)), pooled(math.exp(hi))


CalibrationSet = tuple[Retriever, torch.Tensor, torch.Tensor, torch.Tensor]
"""(retriever, memories, query nodes, noise z) of one calibration cell."""


def decoder_accuracy(retriever: Retriever, memories: torch.Tensor, nodes: torch.Tensor, rho: float, z: torch.Tensor,
                     chunk: int) -> float:
    """Fraction of noisy queries whose ML leaf under the retriever's noise at rho (``ml_leaf``) is their source."""
    hits = [ml_leaf(retriever.noise, noisy_queries(memories, nodes[lo:lo + chunk], rho, z[lo:lo + chunk],
                                                   retriever.noise, retriever.curvature),
                    memories, rho, retriever.curvature) == nodes[lo:lo + chunk] for lo in range(0, len(nodes), chunk)]
    return float(torch.cat(hits).double().mean())


def calibrate_noise_on_decoder(sets: list[CalibrationSet], target: float, rho_max: float, iterations: int,
                               chunk: int) -> tuple[float, float]:
    """Bisection on rho in [0, rho_max] for the ML decoder's pooled accuracy (mean over the calibration cells, equal
    query counts) to cross ``target`` (it falls as rho grows); returns (rho, that accuracy at rho). The memory's
    beta plays no part: the noise is set by what its Bayes-optimal read-out can decode."""
    def pooled(rho: float) -> float:
        return sum(decoder_accuracy(r, m, n, rho, z, chunk) for r, m, n, z in sets) / len(sets)

    lo, hi = 0.0, rho_max
    for _ in range(iterations):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if pooled(mid) >= target else (lo, mid)
    rho = (lo + hi) / 2
    return rho, pooled(rho)


@dataclass(frozen=True)
class NoisyRule:
    """The noisy beta rule's outcome in one (b, D): the memory's pooled accuracy at the chosen beta, its stronger
    decoder's (max of the ML and nearest-neighbour decoders' pooled accuracies) and the number of queries."""

    accuracy: float
    decoder: float
    n_queries: int


def calibrate_beta_noisy(retriever: Retriever, sets: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]],
                         rho: float, rel_gap: float, beta_max: float, iterations: int, chunk: int,
                         z: float = 0.0) -> tuple[Retriever, NoisyRule]:
    """The retriever at the smallest beta in [retriever.beta, beta_max] (retriever.beta itself if it qualifies, else
    bisection on log beta) whose noisy calibration queries over ``sets`` ((memories, query leaves, standard noise z)
    of the calibration cells, queries at ratio rho) keep 1 - rel_gap of its stronger decoder's accuracy above chance,
    judged on the per-query differences

        d_i = 1[memory decodes query i] - (1 - rel_gap) 1[stronger decoder does] - rel_gap / leaves_i,

    (the stronger decoder: the ML or nearest-neighbour one, whichever is more accurate pooled) by their one-sided lower
    confidence bound mean(d) - z sd(d) / sqrt(n) >= 0 (z = 0: the pooled rule A_mem - chance >= (1 - rel_gap)
    (A_ref - chance)); beta_max where no beta qualifies. The bound keeps the smallest qualifying beta from sitting
    at the edge of what its own queries allow, where fresh seeds fall below it (the selection effect)."""
    c = retriever.curvature
    queries = [noisy_queries(m, n, rho, zz, retriever.noise, c) for m, n, zz in sets]
    n = sum(len(nd) for _, nd, _ in sets)
    ml_ok = torch.cat([ml_leaf(retriever.noise, q, m, rho, c) == nd for q, (m, nd, _) in zip(queries, sets)]).cpu()
    nn_ok = torch.cat([nearest_leaf(retriever.model, q, m, c) == nd for q, (m, nd, _) in zip(queries, sets)]).cpu()
    ml, nn = float(ml_ok.double().mean()), float(nn_ok.double().mean())
    strongest, ref = (ml, ml_ok) if ml >= nn else (nn, nn_ok)
    chance_q = torch.cat([torch.full((len(nd),), 1 / len(m), dtype=torch.float64) for m, nd, _ in sets])
    floor = (1 - rel_gap) * ref.double() + rel_gap * chance_q
    ok_of: dict[float, torch.Tensor] = {}

    def ok(beta: float) -> torch.Tensor:
        if beta not in ok_of:
            r = replace(retriever, beta=beta)
            ok_of[beta] = torch.cat([torch.cat([r.retrieve(q[lo:lo + chunk], m)[0] == nd[lo:lo + chunk]
                                                for lo in range(0, len(nd), chunk)])
                                     for q, (m, nd, _) in zip(queries, sets)]).cpu()
        return ok_of[beta]

    def competent(beta: float) -> bool:
        d = ok(beta).double() - floor
        return float(d.mean() - z * d.std() / math.sqrt(n)) >= -1e-12

    def pooled(beta: float) -> float:
        return float(ok(beta).double().mean())

    if competent(retriever.beta):
        return retriever, NoisyRule(pooled(retriever.beta), strongest, n)
    lo, hi = math.log(retriever.beta), math.log(beta_max)
    for _ in range(iterations):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if competent(math.exp(mid)) else (mid, hi)
    return replace(retriever, beta=math.exp(hi)), NoisyRule(pooled(math.exp(hi)), strongest, n)
