"""Procedural data (the paper's model) and removal subsets, with their Parquet round trip.

Model, per dimension d: theta* = r u with u uniform on the unit sphere and r = ``theta_norm``; x ~ N(0, I_d);
y ~ Bernoulli(sigmoid(x . theta*)). The dataset of size n is the first n rows of one n_max-row draw per d (nested
designs, so the trend in n is not blurred by redrawing). A test split of ``n_test`` rows per d follows.

Removal subsets T of size k per cell (n, d, k):
- ``random``: k indices drawn uniformly without replacement from range(n);
- ``coherent``: one cluster, the k nearest (Euclidean) same-label neighbours of a uniformly drawn anchor point
  (the anchor included): points that move the model in a common direction (Koh et al. 2019's coherent groups).
Every draw uses its own ``numpy.random.SeedSequence([seed, ...cell])`` so a cell does not depend on the grid.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def cell_rng(seed: int, *cell: int) -> np.random.Generator:
    """An independent generator for one cell of the design: PCG64 seeded by SeedSequence([seed, *cell])."""
    return np.random.default_rng(np.random.SeedSequence([seed, *cell]))


def sample_logistic(rng: np.random.Generator, n: int, d: int, theta_norm: float) -> tuple[np.ndarray, ...]:
    """(X, y, theta*): x_i ~ N(0, I_d), y_i ~ Bernoulli(sigmoid(x_i . theta*)), ||theta*|| = theta_norm."""
    u = rng.standard_normal(d)
    theta_star = theta_norm * u / np.linalg.norm(u)
    X = rng.standard_normal((n, d))
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-X @ theta_star))).astype(np.float64)
    return X, y, theta_star


def random_subsets(rng: np.random.Generator, n: int, k: int, count: int) -> np.ndarray:
    """``count`` subsets of range(n), each k indices drawn uniformly without replacement (count x k)."""
    return np.stack([rng.choice(n, size=k, replace=False) for _ in range(count)])


def coherent_subsets(rng: np.random.Generator, X: np.ndarray, y: np.ndarray, k: int, count: int) -> np.ndarray:
    """``count`` clusters: the k nearest same-label points (Euclidean, anchor included) of a random anchor."""
    rows = []
    for anchor in rng.choice(len(y), size=count, replace=False):
        same = np.flatnonzero(y == y[anchor])
        if len(same) < k:
            raise ValueError(f"a coherent group of {k} needs {k} points of label {y[anchor]:g}, there are {len(same)}")
        dist = np.linalg.norm(X[same] - X[anchor], axis=1)
        rows.append(same[np.argsort(dist, kind="stable")[:k]])
    return np.stack(rows)


def write_data(path: Path, blocks: list[tuple[int, str, np.ndarray, np.ndarray]]) -> None:
    """Long table of (d, split, X, y) blocks: one row per sample with columns d, split, row, y, x (list<float64>)."""
    parts = []
    for d, split, X, y in blocks:
        parts.append(
            pa.table(
                {
                    "d": pa.array(np.full(len(y), d), pa.int32()),
                    "split": pa.array([split] * len(y)),
                    "row": pa.array(np.arange(len(y)), pa.int32()),
                    "y": pa.array(y),
                    "x": pa.array(list(X), pa.list_(pa.float64())),
                }
            )
        )
    pq.write_table(pa.concat_tables(parts), path)


def subsets_table(rows: list[tuple[int, int, int, str, int, np.ndarray]]) -> pa.Table:
    """Rows (n, d, k, kind, subset, indices) as the subsets table (indices: list<int64>)."""
    n, d, k, kind, s, idx = zip(*rows, strict=True)
    return pa.table({
        "n": pa.array(n, pa.int32()), "d": pa.array(d, pa.int32()), "k": pa.array(k, pa.int32()),
        "kind": pa.array(kind), "subset": pa.array(s, pa.int32()),
        "indices": pa.array([r.tolist() for r in idx], pa.list_(pa.int64())),
    })


def load_split(path: Path, d: int, split: str, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of dimension d and ``split`` from the data table at ``path``; the first n rows if n is given."""
    t = pq.read_table(path, filters=[("d", "=", d), ("split", "=", split)])
    t = t.sort_by("row")
    if n is not None:
        if n > t.num_rows:
            raise ValueError(f"asked for {n} {split} rows of d={d}, the table has {t.num_rows}")
        t = t.slice(0, n)
    X = t.column("x").combine_chunks().flatten().to_numpy(zero_copy_only=False, writable=True)
    return X.reshape(t.num_rows, d), t.column("y").combine_chunks().to_numpy(zero_copy_only=False, writable=True)


def subset_indices(table: pa.Table) -> np.ndarray:
    """The ``indices`` column of a table whose rows all share one k, as an (rows x k) int64 array."""
    col = table.column("indices").combine_chunks()
    return col.flatten().to_numpy().astype(np.int64).reshape(table.num_rows, -1)
