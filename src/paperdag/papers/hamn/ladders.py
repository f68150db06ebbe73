"""The embeddings' trivial rungs, computed in the evaluate stage (the retrieval rungs, each memory's nearest-neighbour
and ML decoders, are run on the memory's own queries in the retrieve stage: queries.nearest_leaf, queries.ml_leaf).

- Embeddings: the untrained embedding (the embed stage's ``map_untrained``: the initial coordinates, never updated)
  and a uniformly random ranking of the other nodes (one fixed-seed draw per cell), in the same reconstruction MAP.
"""

from __future__ import annotations

import numpy as np

from .embedding import average_precision
from .tree import Tree

RANKING_STREAM = 2  # the random-ranking rung's draws: a stream no stage uses (design.py: 0 embed, 1 noise)


def random_ranking_map(tree: Tree, root: int, cell: tuple[int, int, int]) -> float:
    """MAP of ranking every other node by i.i.d. uniform distances (symmetric; one draw from the cell's ranking
    stream): the reconstruction metric of an embedding that knows nothing."""
    rng = np.random.default_rng(np.random.SeedSequence([root, *cell, RANKING_STREAM]))
    d = rng.random((tree.size, tree.size))
    return average_precision(tree, np.triu(d, 1) + np.triu(d, 1).T)

