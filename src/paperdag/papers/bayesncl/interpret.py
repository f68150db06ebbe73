"""Interpretability of feature dimensions, from an activation matrix A (n samples x D dimensions) and labels.

Following NCL (Wang et al. 2024, ICLR), a dimension is read through its top-m activating samples:
* active(d): at least m samples have A_nd > tau;
* consistency(d) = max_c |{top-m samples of d with class c}| / m; semantic consistency = mean over active d;
* chance-corrected purity kappa(d; y) = (p - q) / (1 - q), p = the share of the most frequent value of y among the
  top-m samples of d, q = that value's share in the whole sample (0 = as mixed as the data, 1 = pure);
* d predicts the background when kappa(d; background) > kappa(d; class).
"""

from __future__ import annotations

import numpy as np


def top_samples(acts: np.ndarray, m: int) -> np.ndarray:
    """Indices (D, m) of the m largest activations of each dimension (ties broken by sample index)."""
    return np.argsort(-acts, axis=0, kind="stable")[:m].T


def active_dims(acts: np.ndarray, m: int, tau: float) -> np.ndarray:
    """Boolean (D,): dimension d is active when at least m samples have A_nd > tau."""
    return (acts > tau).sum(0) >= m


def purity(top: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p, q) per dimension: p = share of the most frequent value of y among its top samples, q = that value's
    share in all of y."""
    values = np.unique(y)
    counts = (y[top][..., None] == values).sum(1)  # (D, |values|)
    mode = counts.argmax(1)
    base = (y[:, None] == values).mean(0)
    return counts.max(1) / top.shape[1], base[mode]


def kappa(top: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Chance-corrected purity (p - q) / (1 - q) of each dimension's top samples."""
    p, q = purity(top, y)
    return (p - q) / (1 - q)


def dimension_report(acts: np.ndarray, label: np.ndarray, background: np.ndarray, m: int,
                     tau: float) -> dict[str, float]:
    """Semantic consistency, the share of active dimensions that predict the background, and the active count."""
    active = active_dims(acts, m, tau)
    if not active.any():
        return {"consistency": 0.0, "background_share": 0.0, "active_dims": 0.0}
    top = top_samples(acts[:, active], m)
    return {"consistency": float(purity(top, label)[0].mean()),
            "background_share": float((kappa(top, background) > kappa(top, label)).mean()),
            "active_dims": float(active.sum())}
