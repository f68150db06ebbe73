"""Tail probabilities of the steady state against the Gaussian limit.

With r^2 = y^T Sigma^-1 y (the Mahalanobis radius; |y| / sigma in 1-D), the Gaussian limit gives
P(r > t) = P(chi^2_d > t^2) (= 2 (1 - Phi(t)) in 1-D). The empirical tail is the fraction of chains with r > t and
its Monte-Carlo standard error sqrt(p (1 - p) / n).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import chi2


def tail_table(y: np.ndarray, sigma: np.ndarray, levels: list[float]) -> dict[str, np.ndarray]:
    """Per level t: empirical P(r > t), Gaussian P(chi^2_d > t^2), and the empirical standard error."""
    r = np.sqrt(np.einsum("ni,ij,nj->n", y, np.linalg.inv(sigma), y))
    t = np.asarray(levels, float)
    emp = (r[:, None] > t[None, :]).mean(0)
    return {"t": t, "empirical": emp, "gaussian": chi2.sf(t**2, y.shape[1]), "se": np.sqrt(emp * (1 - emp) / len(y))}
