"""Exact W1 in 2-D on subsamples: the optimal-transport linear program (POT's network simplex, ot.emd2).

W1(mu_n, nu_n) between two n-point empirical measures with Euclidean cost is the value of the assignment LP, solved
exactly. On subsamples it estimates E W1(mu_n, nu_n), not W1(mu, nu): by joint convexity of W1 and E mu_n = mu,
E W1(mu_n, nu_n) >= W1(mu, nu), so the subsample value is an upper-biased estimate, and its bias at W1 = 0 is the
floor E W1(nu_n, nu'_n) of two subsamples of the limit law (in 2-D it decays like (log n / n)^(1/2)). The sliced W1
(distance.py) is a lower bound on W1 (each projection is 1-Lipschitz); the two bracket the true distance up to
sampling error. Sampling error: R independent subsample pairs, their mean with the Student-t 95% interval (unit
``subsample``: one pair).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import ot

from paperdag.common.stats import Interval, mean_ci


def exact_w1(a: np.ndarray, b: np.ndarray) -> float:
    """W1 between the uniform empirical measures on the rows of a and b (Euclidean cost), by the exact LP."""
    return float(ot.emd2([], [], ot.dist(a, b, metric="euclidean"), numItermax=10**8))


def subsample_w1(y: np.ndarray, draw: Callable[[int], np.ndarray], n: int, repeats: int,
                 rng: np.random.Generator) -> tuple[Interval, Interval]:
    """(E W1(y_n, limit_n), E W1(limit_n, limit'_n)) with t-intervals over ``repeats`` subsample pairs: n chains
    without replacement against n fresh draws of the limit law, and two fresh draws of it (the floor)."""
    w = [exact_w1(y[rng.choice(len(y), n, replace=False)], draw(n)) for _ in range(repeats)]
    floor = [exact_w1(draw(n), draw(n)) for _ in range(repeats)]
    return mean_ci(w, unit="subsample"), mean_ci(floor, unit="subsample")
