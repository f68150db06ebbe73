"""Wasserstein-1 distances between the steady-state sample and its limit law, with bootstrap replicates.

1-D, equal sample sizes n: W1(a, b) = (1/n) sum_i |a_(i) - b_(i)| (order statistics; exact, and equal to
scipy.stats.wasserstein_distance, which the tests check). 2-D: the sliced distance
SW1(a, b) = (1/P) sum_j W1(<a, u_j>, <b, u_j>) over P equally spaced directions u_j = (cos pi j/P, sin pi j/P)
(equal to POT's ot.sliced_wasserstein_distance with p = 1 and these projections, which the tests check; POT's
general routine is ~20x slower on 4e5 points, so the sorted form is used here). The limit law enters through a
sample of the same size n; the Monte-Carlo floor is the same distance between two independent samples of the
limit law, i.e. what a perfect steady state would score.
Bootstrap: chains and limit draws are resampled with replacement (counts c_a, c_b, each summing to n). Along a
direction, W1 of the resamples is the integral of |F_a - F_b| over the merged sorted values z_(1) <= ... <= z_(2n)
of both samples: W1 = (1/n) sum_k |C_k| (z_(k+1) - z_(k)), with C_k the running sum of the counts of the first k
merged values (+c_a for a value of a, -c_b for one of b). The merge order depends on the samples only, so it is
computed once and every replicate is a gather and a cumulative sum over all directions at once (no re-sorting).
"""

from __future__ import annotations

import numpy as np


def directions(dim: int, count: int) -> np.ndarray:
    """Projection matrix (dim x P): the identity direction in 1-D, P equally spaced unit vectors on the 2-D circle."""
    if dim == 1:
        return np.ones((1, 1))
    angles = np.pi * np.arange(count) / count
    return np.vstack([np.cos(angles), np.sin(angles)])


def w1(a: np.ndarray, b: np.ndarray, proj: np.ndarray) -> float:
    """W1 (1-D) or sliced W1 (2-D, the given projections) between equal-size samples a and b (n x d):
    the mean over directions and ranks of |<a, u>_(i) - <b, u>_(i)|."""
    if len(a) != len(b):
        raise ValueError(f"equal sample sizes needed, got {len(a)} and {len(b)}")
    return float(np.abs(np.sort(a @ proj, axis=0) - np.sort(b @ proj, axis=0)).mean())


def bootstrap_w1(a: np.ndarray, b: np.ndarray, proj: np.ndarray, reps: int, rng: np.random.Generator) -> np.ndarray:
    """``reps`` bootstrap replicates of the (sliced) W1 between a and b (equal sizes n), each resampling both: the
    merged-CDF form of the module docstring, vectorised over the directions (int32 running counts: |C_k| <= n)."""
    n = len(a)
    z = np.concatenate([a @ proj, b @ proj]).T  # directions x 2n
    order = np.argsort(z, axis=1, kind="stable")
    gaps = np.diff(np.take_along_axis(z, order, axis=1), axis=1)
    order = order.astype(np.int32)
    out = np.empty(reps)
    for r in range(reps):
        ca = np.bincount(rng.integers(0, n, n), minlength=n)
        cb = np.bincount(rng.integers(0, n, n), minlength=n)
        running = np.concatenate([ca, -cb]).astype(np.int32)[order]
        np.cumsum(running, axis=1, out=running)
        counts = np.abs(running[:, :-1])
        out[r] = float(np.einsum("ij,ij->i", counts, gaps).mean()) / n
    return out


def best_scale(y: np.ndarray, z: np.ndarray) -> float:
    """s minimising (1/n) sum_i |y_(i) - s z_(i)|, the W1 to the sample s z of N(0, s^2) (1-D): the weighted median
    of y_(i) / z_(i) with weights |z_(i)| (the objective is sum_i |z_(i)| |y_(i)/z_(i) - s|)."""
    ys, zs = np.sort(y), np.sort(z)
    keep = zs != 0
    r, w = ys[keep] / zs[keep], np.abs(zs[keep])
    order = np.argsort(r)
    cum = np.cumsum(w[order])
    return float(r[order][np.searchsorted(cum, cum[-1] / 2)])
