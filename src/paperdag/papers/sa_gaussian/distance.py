"""Wasserstein-1 distances between the steady state and its limit law, with bootstrap replicates, in torch on the
stage's device (the verify stage's ``ctx.device``: the CPU on the default, a GPU where the stage gets one).

1-D, equal sample sizes n: W1(a, b) = (1/n) sum_i |a_(i) - b_(i)| (order statistics; exact, and equal to
scipy.stats.wasserstein_distance, which the tests check). 2-D: the sliced distance
SW1(a, b) = (1/P) sum_j W1(<a, u_j>, <b, u_j>) over P equally spaced directions u_j = (cos pi j/P, sin pi j/P)
(equal to POT's ot.sliced_wasserstein_distance with p = 1 and these projections, which the tests check; POT's
general routine is ~20x slower on 4e5 points, so the sorted form is used here). The limit law enters through a
sample of the same size n; the Monte-Carlo floor is the same distance between two independent samples of the
limit law, i.e. what a perfect steady state would score.
Bootstrap (the estimator): a replicate resamples the chains a and the limit draws b with replacement, each n of n
(multiplicities c_a, c_b, each summing to n), and is the (sliced) W1 of the two resamples. Along a direction, W1 of
the resamples is the integral of |F_a - F_b| over the merged sorted values z_(1) <= ... <= z_(2n) of both samples:
W1 = (1/n) sum_{k<2n} |C_k| (z_(k+1) - z_(k)), with C_k the running sum of the counts of the first k merged values
(+c_a for a value of a, -c_b for one of b; |C_k| <= n fits int32). The merge order depends on the samples only, so
it is computed once per stepsize (a stable argsort of the 2n projections per direction) and every replicate is a
bincount of its resampled indices, a gather by the merge order and a cumulative sum, a direction at a time (no
re-sorting; device memory ~32 n bytes per direction of orders and gaps, 26 GB at n = 1e8 and 8 directions). The replicates' spread gives the intervals (common/stats via summary.py).
Resampling draws: on the CPU from the stage's numpy rng (``rng.integers(0, n, n)`` for a, then for b, per
replicate), the numpy implementation's draws one for one, so the CPU numbers equal it to round-off (the tests keep
it as their oracle); on a CUDA device from a torch generator on the device seeded by one draw of that rng, since
numpy draws ~5e7 indices a second on one host core (1e8 chains: ~1 min per stepsize and target for 20 replicates).
"""

from __future__ import annotations

import numpy as np
import torch

F64 = torch.float64


def directions(dim: int, count: int) -> np.ndarray:
    """Projection matrix (dim x P): the identity direction in 1-D, P equally spaced unit vectors on the 2-D circle."""
    if dim == 1:
        return np.ones((1, 1))
    angles = np.pi * np.arange(count) / count
    return np.vstack([np.cos(angles), np.sin(angles)])


def _on(x: np.ndarray | torch.Tensor, device: str) -> torch.Tensor:
    """x as a float64 tensor on ``device``."""
    return torch.as_tensor(x, dtype=F64).to(device)


def w1(a: np.ndarray, b: np.ndarray, proj: np.ndarray, device: str = "cpu") -> float:
    """W1 (1-D) or sliced W1 (2-D, the given projections) between equal-size samples a and b (n x d):
    the mean over directions and ranks of |<a, u>_(i) - <b, u>_(i)|."""
    if len(a) != len(b):
        raise ValueError(f"equal sample sizes needed, got {len(a)} and {len(b)}")
    p, ta, tb = _on(proj, device), _on(a, device), _on(b, device)
    per = [float((torch.sort(ta @ u).values - torch.sort(tb @ u).values).abs().sum()) for u in p.T]  # a direction at once
    return sum(per) / (len(per) * len(a))


def resample_generator(rng: np.random.Generator, device: str) -> torch.Generator | None:
    """Where resampling indices come from: None (the numpy ``rng`` itself) on the CPU; on CUDA a torch generator on
    the device, seeded from one draw of ``rng``."""
    if torch.device(device).type == "cpu":
        return None
    return torch.Generator(device=device).manual_seed(int(rng.integers(2**62)))


def resample_counts(n: int, rng: np.random.Generator, gen: torch.Generator | None, device: str) -> torch.Tensor:
    """Multiplicities (int32, length n, summing to n) of a resample of n items with replacement on ``device``: the
    bincount of ``rng.integers(0, n, n)`` where ``gen`` is None, else of n uniform indices drawn by ``gen``."""
    if gen is None:  # the draws are on the host: count them there
        return torch.from_numpy(np.bincount(rng.integers(0, n, n), minlength=n).astype(np.int32)).to(device)
    return torch.bincount(torch.randint(0, n, (n,), generator=gen, device=device), minlength=n).to(torch.int32)


def bootstrap_w1(a: np.ndarray, b: np.ndarray, proj: np.ndarray, reps: int, rng: np.random.Generator,
                 device: str = "cpu") -> np.ndarray:
    """``reps`` bootstrap replicates of the (sliced) W1 between a and b (equal sizes n), each resampling both: the
    merged-CDF form of the module docstring on ``device`` (one argsort per direction, then per replicate bincount,
    gather, cumsum)."""
    n = len(a)
    p, ta, tb = _on(proj, device), _on(a, device), _on(b, device)
    order, gaps = [], []  # per direction: merge order (int64, 2n) and merged gaps (float64, 2n - 1)
    for u in p.T:
        z = torch.cat([ta @ u, tb @ u])
        order.append(torch.argsort(z, stable=True))
        gaps.append(torch.diff(z[order[-1]]))
    del ta, tb, z
    gen = resample_generator(rng, device)
    out = np.empty(reps)
    for r in range(reps):
        signed = torch.cat([resample_counts(n, rng, gen, device), -resample_counts(n, rng, gen, device)])
        total = 0.0
        for o, g in zip(order, gaps, strict=True):  # a direction at once: device memory ~ 20 n bytes above the
            running = torch.cumsum(torch.take(signed, o), dim=0, dtype=torch.int32)  # 32 n of orders and gaps
            total += float(torch.dot(running[:-1].abs_().to(F64), g))
        out[r] = total / (len(order) * n)
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
