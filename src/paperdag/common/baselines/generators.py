"""Trivial generators, judged in the evaluation's own metric: a fitted Gaussian, replay of training items, and
retrieval of the training item whose key (a prompt's or layout's encoding) is nearest to the requested one.

- ``fit_gaussian``: mu = (1/n) sum_i x_i, Sigma = 1/(n-1) sum_i (x_i - mu)(x_i - mu)^T + (1e-6 tr(Sigma) / d) I on
  the flattened samples (the ridge keeps Sigma positive definite when n <= d);
- ``sample_gaussian``: x = mu + L z, z ~ N(0, I), L L^T = Sigma (Cholesky);
- ``replay``: n training items drawn uniformly, without replacement where n <= N, else with replacement;
- ``nearest_neighbour_retrieval``: item_{i*(q)}, i*(q) = argmin_i ||q - k_i||_2 (ties: the lowest index).
"""

from __future__ import annotations

import numpy as np

RIDGE = 1e-6
CHUNK = 1 << 24  # distance entries per chunk of queries


def _flat(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x.reshape(len(x), -1)


def fit_gaussian(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean [d], covariance [d, d]) of the flattened samples x [n, ...], ridge 1e-6 tr/d on the diagonal."""
    x = _flat(x)
    if len(x) < 2:
        raise ValueError(f"fit_gaussian needs at least 2 samples, got {len(x)}")
    cov = np.atleast_2d(np.cov(x, rowvar=False))
    return x.mean(axis=0), cov + RIDGE * np.trace(cov) / len(cov) * np.eye(len(cov))


def sample_gaussian(mean: np.ndarray, cov: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """n draws [n, d] of N(mean, cov)."""
    return mean + rng.standard_normal((n, len(mean))) @ np.linalg.cholesky(cov).T


def replay(train: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """n training items (rows of ``train``), without replacement where n <= len(train)."""
    return np.asarray(train)[rng.choice(len(train), size=n, replace=n > len(train))]


def nearest_indices(train_keys: np.ndarray, query_keys: np.ndarray) -> np.ndarray:
    """argmin_i ||q - k_i||_2 for each query, from ||q||^2 - 2 q.k_i + ||k_i||^2 in chunks of queries."""
    keys, queries = _flat(train_keys), _flat(query_keys)
    norms = (keys**2).sum(axis=1)
    step = max(1, CHUNK // max(len(keys), 1))
    parts = [(norms - 2 * queries[s : s + step] @ keys.T).argmin(axis=1) for s in range(0, len(queries), step)]
    return np.concatenate([np.zeros(0, dtype=np.int64), *parts])


def nearest_neighbour_retrieval(train_items: np.ndarray, train_keys: np.ndarray, query_keys: np.ndarray) -> np.ndarray:
    """For each query key, the training item whose key is nearest in Euclidean distance."""
    if len(train_items) != len(train_keys):
        raise ValueError(f"{len(train_items)} training items but {len(train_keys)} keys")
    return np.asarray(train_items)[nearest_indices(train_keys, query_keys)]
