"""Balanced b-ary trees of depth D in breadth-first numbering, their ancestor relation and lowest common ancestors.

Node 0 is the root; the children of node i are b i + 1, ..., b i + b, so parent(i) = (i - 1) // b and level l holds
the b^l nodes (b^l - 1)/(b - 1), ..., (b^(l+1) - 1)/(b - 1) - 1. The tree has n = (b^(D+1) - 1)/(b - 1) nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Tree:
    """A rooted tree: parent[i] (-1 for the root) and level[i] = depth of node i (root 0)."""

    branching: int
    depth: int
    parent: np.ndarray
    level: np.ndarray

    @property
    def size(self) -> int:
        return len(self.parent)

    @property
    def leaves(self) -> np.ndarray:
        """Indices of the nodes at level D."""
        return np.flatnonzero(self.level == self.depth)


def balanced_tree(branching: int, depth: int) -> Tree:
    """The complete b-ary tree of depth D: parent(i) = (i - 1) // b, level(i) = level(parent(i)) + 1."""
    n = (branching ** (depth + 1) - 1) // (branching - 1)
    parent = np.concatenate([[-1], (np.arange(1, n) - 1) // branching])
    level = np.zeros(n, dtype=np.int64)
    for i in range(1, n):
        level[i] = level[parent[i]] + 1
    return Tree(branching, depth, parent, level)


def tree_from_parents(branching: int, depth: int, parent: np.ndarray) -> Tree:
    """Rebuild a Tree from its stored parent array (levels recomputed from the parents)."""
    level = np.zeros(len(parent), dtype=np.int64)
    for i in range(1, len(parent)):
        level[i] = level[parent[i]] + 1
    return Tree(branching, depth, np.asarray(parent, dtype=np.int64), level)


def ancestor_table(tree: Tree) -> np.ndarray:
    """A[i, l] = the ancestor of node i at level l for l <= level(i) (A[i, level(i)] = i), else -1."""
    table = np.full((tree.size, tree.depth + 1), -1, dtype=np.int64)
    for i in range(tree.size):
        node = i
        for lvl in range(tree.level[i], -1, -1):
            table[i, lvl] = node
            node = tree.parent[node]
    return table


def related(anc: np.ndarray, level: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """u ~ v (elementwise): u is v, an ancestor of v or a descendant of v (the transitive closure of the tree, made
    symmetric), i.e. A[u, level(v)] = v or A[v, level(u)] = u."""
    return (anc[u, level[v]] == v) | (anc[v, level[u]] == u)


def closure_pairs(tree: Tree) -> tuple[np.ndarray, np.ndarray]:
    """(u, v) for every node u and every proper ancestor v of u: the edges of the transitive closure."""
    anc = ancestor_table(tree)
    u, lvl = np.nonzero((anc >= 0) & (np.arange(tree.depth + 1)[None, :] < tree.level[:, None]))
    return u, anc[u, lvl]


def lca_level(anc: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Level of the lowest common ancestor of u and v: (number of levels l with A[u, l] = A[v, l] >= 0) - 1."""
    return ((anc[u] == anc[v]) & (anc[u] >= 0)).sum(axis=1) - 1
