"""The trivial rungs the preconditions are judged against, computed in the evaluate stage only.

- Retrieval: each memory's nearest-neighbour decoder in its own geometry, the memory's read-out applied to the noisy
  query itself with no update (the Euclidean memories: the stored pattern nearest in Euclidean distance in the
  memory's input space; HAMN: the leaf nearest to exp_0(query) in the Poincare distance, the largest
  c <L(p_i), L(exp_0 q)>_L), i.e. every memory's zero-temperature, zero-step limit; and chance, 1 / #leaves. The
  queries are the retrieve stage's own: the same leaves, the noise z of the cell's noise stream and the model's rho
  calibrated at depth 2, so memory and decoder are paired query by query.
- Embeddings: the untrained embedding (the embed stage's ``map_untrained``: the initial coordinates, never updated)
  and a uniformly random ranking of the other nodes (one fixed-seed draw per cell), in the same reconstruction MAP.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from .design import NOISE_STREAM, generator
from .embedding import average_precision
from .hyperbolic_memory import energy_terms, poincare_ball
from .modern_hopfield import EUCLIDEAN_MEMORIES
from .queries import input_space, leaf_queries, noisy_queries
from .tree import Tree

RANKING_STREAM = 2  # the random-ranking rung's draws: a stream no stage uses (design.py: 0 embed, 1 noise)


def nearest_leaf(model: str, queries: torch.Tensor, memories: torch.Tensor, curvature: float) -> torch.Tensor:
    """Index of the stored pattern nearest to each query in the memory's own geometry (no update)."""
    if model in EUCLIDEAN_MEMORIES:
        return torch.cdist(queries, memories).argmin(dim=1)
    ball = poincare_ball(curvature)
    return energy_terms(ball.expmap0(queries, project=False), ball.expmap0(memories, project=False),
                        curvature)[0].argmax(dim=1)


def nearest_neighbour_cells(model: str, root: int, trees: dict[tuple[int, int], Tree],
                            embeddings: dict[tuple[int, int, int], torch.Tensor], rho: dict[int, float],
                            retrievals: pd.DataFrame, queries_per_cell: int, curvature: float) -> pd.DataFrame:
    """One row per evaluation cell (b, D, seed) of ``retrievals`` (the model's per-query rows, in query order):
    accuracy_nn (the nearest-neighbour decoder on the model's own noisy queries), n_queries, disagreements (queries
    the memory and the decoder decode to different leaves) and chance (1 / #leaves)."""
    rows = []
    for (b, d, s), cell in retrievals.groupby(["branching", "depth", "seed"], sort=True):
        tree = trees[int(b), int(d)]
        memories = input_space(model, embeddings[int(b), int(d), int(s)][torch.as_tensor(tree.leaves)], curvature)
        n = max(queries_per_cell, len(tree.leaves))
        nodes, z = leaf_queries(len(tree.leaves), n, memories.shape[1], generator(root, (int(b), int(d), int(s)),
                                                                                   NOISE_STREAM))
        if len(cell) != n or not np.array_equal(cell["leaf"].to_numpy(), nodes.numpy()):
            raise ValueError(f"{model} b{b} D{d} s{s}: the retrieve stage's queries are not the ones re-drawn here")
        decoded = nearest_leaf(model, noisy_queries(memories, nodes, rho[int(b)], z), memories, curvature).numpy()
        rows.append({"branching": int(b), "depth": int(d), "seed": int(s),
                     "accuracy_nn": float((decoded == nodes.numpy()).mean()), "n_queries": n,
                     "disagreements": int((decoded != cell["retrieved"].to_numpy()).sum()),
                     "chance": 1 / len(tree.leaves)})
    return pd.DataFrame(rows)


def random_ranking_map(tree: Tree, root: int, cell: tuple[int, int, int]) -> float:
    """MAP of ranking every other node by i.i.d. uniform distances (symmetric; one draw from the cell's ranking
    stream): the reconstruction metric of an embedding that knows nothing."""
    rng = np.random.default_rng(np.random.SeedSequence([root, *cell, RANKING_STREAM]))
    d = rng.random((tree.size, tree.size))
    return average_precision(tree, np.triu(d, 1) + np.triu(d, 1).T)

