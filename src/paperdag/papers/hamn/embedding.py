"""Poincare embeddings (Nickel & Kiela 2017, NeurIPS) and their Euclidean counterpart: one loss, one optimiser,
one budget, two geometries.

For every edge (u, v) of the tree's transitive closure and K negatives v' drawn uniformly among nodes unrelated to u,
    L = - mean_(u,v) log[ exp(-d(u, v)) / (exp(-d(u, v)) + sum_v' exp(-d(u, v'))) ],
with d the Poincare-ball distance
    d_c(x, y) = (1 / sqrt c) arcosh(1 + 2 c ||x - y||^2 / ((1 - c ||x||^2)(1 - c ||y||^2)))
(the closed form of geoopt's Mobius-addition formula, several times faster on CPU) or the Euclidean ||x - y||.
Both are minimised by geoopt's Riemannian Adam (on geoopt.Euclidean it is plain Adam) from the same
uniform initialisation in [-init, init]^dim, full batch with fresh negatives every epoch, the first ``burn_in``
epochs at lr / 10 (Nickel & Kiela's burn-in: a good angular layout forms before points move towards the boundary).

Quality: mean average precision (MAP) of reconstructing each node's closure neighbours from the ranking of all
other nodes by distance (Nickel & Kiela's reconstruction metric); an untrained embedding gives the chance MAP and
the tree's own path metric the reference MAP of an isometric embedding.
"""

from __future__ import annotations

from collections.abc import Callable

import geoopt
import numpy as np
import torch

from .hyperbolic_memory import poincare_ball
from .tree import Tree, ancestor_table, closure_pairs, lca_level, related

GEOMETRIES = ("poincare", "euclidean")


def manifold(geometry: str, curvature: float) -> geoopt.Manifold:
    """The Poincare ball of curvature -c, or flat space."""
    return poincare_ball(curvature) if geometry == "poincare" else geoopt.Euclidean(ndim=1)


def poincare_distance(x: torch.Tensor, y: torch.Tensor, c: float) -> torch.Tensor:
    """d_c(x, y) = arcosh(1 + 2 c ||x - y||^2 / ((1 - c ||x||^2)(1 - c ||y||^2))) / sqrt c, broadcast over rows."""
    num = 2 * c * ((x - y) ** 2).sum(dim=-1)
    den = (1 - c * (x**2).sum(dim=-1)) * (1 - c * (y**2).sum(dim=-1))
    return torch.acosh((1 + num / den).clamp_min(1 + 1e-15)) / c**0.5


def distance(space: geoopt.Manifold, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """d(x, y) in the manifold's geometry, broadcast over leading dimensions."""
    if isinstance(space, geoopt.PoincareBall):
        return poincare_distance(x, y, float(space.c))
    return (x - y).norm(dim=-1)


def pairwise_distance(space: geoopt.Manifold, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """d(x_i, y_j) for all pairs."""
    return distance(space, x[:, None], y[None])


def nk_loss(space: geoopt.Manifold, emb: torch.Tensor, u: torch.Tensor, v: torch.Tensor, neg: torch.Tensor,
            neg_mask: torch.Tensor) -> torch.Tensor:
    """-mean log softmax_0([-d(u, v), -d(u, v'_1), ..., -d(u, v'_K)]), masked negatives excluded."""
    cand = torch.cat([v[:, None], neg], dim=1)
    d = distance(space, emb[u][:, None], emb[cand])
    logits = (-d).masked_fill(torch.cat([torch.zeros_like(neg_mask[:, :1]), neg_mask], dim=1), float("-inf"))
    return -(logits[:, 0] - torch.logsumexp(logits, dim=1)).mean()


BURN_IN_FACTOR = 0.1  # Nickel & Kiela: lr / 10 during the burn-in


def train_embedding(tree: Tree, geometry: str, dim: int, curvature: float, epochs: int, lr: float, negatives: int,
                    init: float, gen: torch.Generator, burn_in: int = 0,
                    on_epoch: Callable[[int, float], None] | None = None) -> tuple[torch.Tensor, float]:
    """Minimise the Nickel-Kiela loss over all closure edges (``burn_in`` epochs at lr / 10 first, included in
    ``epochs``); returns (embedding (n, dim), final loss)."""
    space = manifold(geometry, curvature)
    anc = ancestor_table(tree)
    u_np, v_np = closure_pairs(tree)
    u, v = torch.as_tensor(u_np), torch.as_tensor(v_np)
    x0 = (torch.rand(tree.size, dim, generator=gen, dtype=torch.float64) * 2 - 1) * init
    emb = geoopt.ManifoldParameter(x0, manifold=space)
    opt = geoopt.optim.RiemannianAdam([emb], lr=lr)
    loss = torch.tensor(float("nan"))
    for epoch in range(epochs):
        for group in opt.param_groups:
            group["lr"] = lr * (BURN_IN_FACTOR if epoch < burn_in else 1.0)
        neg = torch.randint(0, tree.size, (len(u), negatives), generator=gen)
        mask = torch.as_tensor(related(anc, tree.level, u_np[:, None], neg.numpy()))
        opt.zero_grad()
        loss = nk_loss(space, emb, u, v, neg, mask)
        loss.backward()
        opt.step()
        if on_epoch is not None:
            on_epoch(epoch, float(loss.detach()))
    return emb.detach().clone(), float(loss.detach())


def average_precision(tree: Tree, d: np.ndarray) -> float:
    """MAP = mean_u (1/|N(u)|) sum_(v in N(u)) precision at the rank of v, ranking all w != u by d[u, w] (ties by
    node index), N(u) the closure neighbours (ancestors and descendants) of u."""
    d = np.array(d, dtype=float)
    np.fill_diagonal(d, np.inf)
    anc = ancestor_table(tree)
    idx = np.arange(tree.size)
    rel = related(anc, tree.level, idx[:, None], idx[None, :])
    np.fill_diagonal(rel, False)
    order = np.argsort(d, axis=1, kind="stable")[:, :-1]  # drop u itself (distance inf, ranked last)
    hits = np.take_along_axis(rel, order, axis=1)
    precision = np.cumsum(hits, axis=1) / np.arange(1, tree.size)[None, :]
    return float(np.mean((precision * hits).sum(axis=1) / hits.sum(axis=1)))


def reconstruction_map(tree: Tree, emb: torch.Tensor, geometry: str, curvature: float) -> float:
    """MAP of the embedding's distances (Nickel & Kiela's reconstruction metric)."""
    return average_precision(tree, pairwise_distance(manifold(geometry, curvature), emb, emb).numpy())


def tree_distances(tree: Tree) -> np.ndarray:
    """The tree's path metric d(u, v) = level(u) + level(v) - 2 level(lca(u, v)) for all pairs."""
    anc = ancestor_table(tree)
    u, v = np.meshgrid(np.arange(tree.size), np.arange(tree.size), indexing="ij")
    lca = lca_level(anc, u.ravel(), v.ravel()).reshape(tree.size, tree.size)
    return tree.level[u] + tree.level[v] - 2 * lca


def average_distortion(tree: Tree, emb: torch.Tensor, geometry: str, curvature: float) -> float:
    """Scale-free average distortion mean_(u<v) |r_uv / mean(r) - 1| of the ratios r_uv = d_emb(u, v) / d_tree(u, v)
    (0 for an embedding isometric to the tree up to scale)."""
    r = (pairwise_distance(manifold(geometry, curvature), emb, emb).numpy() / np.maximum(tree_distances(tree), 1))
    r = r[np.triu_indices(tree.size, k=1)]
    return float(np.mean(np.abs(r / r.mean() - 1)))


def tree_metric_map(tree: Tree) -> float:
    """MAP of the tree's own path metric d(u, v) = level(u) + level(v) - 2 level(lca(u, v)): the reference an
    isometric embedding of the tree would reach (below 1 for D > 2: a leaf's siblings are as close as its
    grandparent)."""
    return average_precision(tree, tree_distances(tree))
