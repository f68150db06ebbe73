"""Interpretability of feature dimensions, from an activation matrix A (n samples x D dimensions) and labels.

Semantic consistency the paper's way (its released evaluation, Cui-Peng-624/BayesNCL
solo/methods/bayesncl_eval_helper_functions.py ``semantic_consistency``, as NCL's PKU-ML/non_neg ``cluster_acc``):
keep the dimensions with sum_n |A_nd| > 0, row-normalise Â_n = A_n / ||A_n|| over them, call sample n activated on
d when |Â_nd| > eps, and score
* consistency(d) = max_c |{activated n with class c}| / |{activated n}| over the dimensions with an activated sample;
  semantic consistency = its mean. A dimension active on every sample scores the largest class prior.
Secondary, a dimension read through its top-m activating samples:
* active(d): at least m samples have A_nd > tau;
* top-m consistency(d) = max_c |{top-m samples of d with class c}| / m; mean over active d;
* chance-corrected purity kappa(d; y) = (p - q) / (1 - q), p = the share of the most frequent value of y among the
  top-m samples of d, q = that value's share in the whole sample (0 = as mixed as the data, 1 = pure);
* d predicts the background when kappa(d; background) > kappa(d; class) (secondary: with backgrounds of one mean
  colour and a dominant family, top-m purity in background is a weak reading).
The judged background reading uses counterfactual composites, every test object i (class y_i) over each of the K
backgrounds b, activations A_ibd (n x K x D). Per dimension, with the grand mean mu, the between-background and
between-class sums of squares
  SS_bg(d) = n sum_b (mean_i A_ibd - mu)^2,   SS_cls(d) = K sum_c n_c (mean_{i: y_i = c, b} A_ibd - mu)^2,
and the background share(d) = SS_bg / (SS_bg + SS_cls): the part of the variance the two factors explain that is
background's (0 = class only, 1 = background only); a dimension where both are 0 is left out. The share of a
representation is its mean over dimensions.
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


def activated_consistency(acts: np.ndarray, label: np.ndarray, eps: float) -> np.ndarray:
    """consistency(d) over all activated samples (module docstring), one value per dimension with an activated
    sample, in dimension order."""
    kept = acts[:, np.abs(acts).sum(0) > 0]
    rows = kept / np.maximum(np.linalg.norm(kept, axis=1, keepdims=True), 1e-12)
    on = (np.abs(rows) > eps).astype(np.float64)
    counts = on.T @ (label[:, None] == np.unique(label)).astype(np.float64)  # (D kept, classes)
    n_on = counts.sum(1)
    return counts[n_on > 0].max(1) / n_on[n_on > 0]


def background_share(acts: np.ndarray, label: np.ndarray) -> np.ndarray:
    """SS_bg / (SS_bg + SS_cls) per dimension (module docstring) of counterfactual activations ``acts`` (n, K, D),
    ``label`` (n,); the dimensions with SS_bg + SS_cls = 0 (to 1e-12 of the total sum of squares) are left out."""
    n, k, _ = acts.shape
    mu = acts.mean((0, 1))
    ss_bg = n * ((acts.mean(0) - mu) ** 2).sum(0)
    classes = np.unique(label)
    ss_cls = sum(k * (label == c).sum() * (acts[label == c].mean((0, 1)) - mu) ** 2 for c in classes)
    total = ss_bg + ss_cls
    scale = ((acts - mu) ** 2).sum((0, 1))
    keep = total > 1e-12 * np.maximum(scale, 1e-300)
    return ss_bg[keep] / total[keep]


def dimension_report(acts: np.ndarray, label: np.ndarray, background: np.ndarray, m: int, tau: float,
                     eps: float) -> dict[str, float]:
    """Semantic consistency over all activated samples (the judged metric), the number of dimensions it averages, the
    share of (sample, dimension) entries activated (1 for a dense signed matrix, whose consistency is the largest
    class prior), and the largest class prior; top-m consistency, the share of active dimensions whose top-m samples
    are purer in background than in class (secondary), and the active count."""
    per_dim = activated_consistency(acts, label, eps)
    rows = acts / np.maximum(np.linalg.norm(acts, axis=1, keepdims=True), 1e-12)
    report = {"consistency": float(per_dim.mean()) if len(per_dim) else 0.0, "activated_dims": float(len(per_dim)),
              "activated_entries": float((np.abs(rows) > eps).mean()),
              "class_prior": float(np.unique(label, return_counts=True)[1].max() / len(label))}
    active = active_dims(acts, m, tau)
    if not active.any():
        return report | {"consistency_top_m": 0.0, "background_top_m_share": 0.0, "active_dims": 0.0}
    top = top_samples(acts[:, active], m)
    return report | {"consistency_top_m": float(purity(top, label)[0].mean()),
                     "background_top_m_share": float((kappa(top, background) > kappa(top, label)).mean()),
                     "active_dims": float(active.sum())}
