"""Reading the stage tables back: trees by (b, D) and embeddings by (b, D, seed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import torch

from paperdag.io import read_table

from .tree import Tree, tree_from_parents


def load_tree(path: Path, branching: int, depth: int) -> Tree:
    """The tree (b, D) of trees.parquet."""
    t = read_table(path)
    rows = t.filter(pc.and_(pc.equal(t["branching"], branching), pc.equal(t["depth"], depth)))
    order = np.argsort(rows["node"].to_numpy())
    return tree_from_parents(branching, depth, rows["parent"].to_numpy()[order])


def load_embeddings(path: Path) -> dict[tuple[int, int, int], torch.Tensor]:
    """(b, D, seed) -> the (n, dim) float64 embedding of embeddings.parquet (rows ordered by node)."""
    t = read_table(path).to_pydict()
    out: dict[tuple[int, int, int], list[tuple[int, list[float]]]] = {}
    for b, d, s, node, vec in zip(t["branching"], t["depth"], t["seed"], t["node"], t["vector"], strict=True):
        out.setdefault((b, d, s), []).append((node, vec))
    return {k: torch.tensor([v for _, v in sorted(rows)], dtype=torch.float64) for k, rows in out.items()}
