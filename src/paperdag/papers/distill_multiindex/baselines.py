"""Real-data baselines along a growing subset: the error curves whose first crossing of the target is their memory.

Both baselines use nested random subsets S_M of the real phase-1 rows (the first M rows of one permutation, M on an
ascending grid), so a larger budget only adds points, and the same initialisation as every other method:
  random_subset  the whole algorithm on S_M alone: W_1 = phase 1 on S_M, then the ridge second layer on S_M,
                 a = argmin (1/M)||Phi a - y||^2 + lam ||a||^2 with lam chosen from a grid by the relative error on the
                 real phase-2 rows (a validation split disjoint from S_M); scored on the test rows; memory M (d + 1);
  random_phase1  W_1 = phase 1 on S_M, scored like the distilled phase-1 search (budget.memory_to_target): the second
                 layer fitted on the real phase-2 rows with the network's lam (what phase-1 matching replaces).
The memory a baseline needs is M* = min {M : e(M) <= target} (``first_reaching``; None where the grid ends first).
Beside them, at one size (the ladder's rung): a k-center coreset of the phase-1 rows (greedy farthest-point
selection in the raw input space, Sener & Savarese 2018, ICLR, "Active learning for convolutional neural networks: a
core-set approach", Alg. 1; the first centre is the subset order's first row) trained like ``random_subset`` (the
whole algorithm on the coreset, lam chosen on validation): a selection of real points of equal memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from .cell import Cell, Config, first_layer, with_real_phase2
from .network import features, ridge

PERMUTATION_STREAM = 4  # SeedSequence([seed, d, r, L, 4]): the subset order (other streams of a cell use 4 or 6 keys)


@dataclass(frozen=True)
class Curves:
    """Test errors per subset size: ``random_subset`` with the validation-chosen ``lambdas``; ``random_phase1``."""

    sizes: list[int]
    random_subset: list[float]
    lambdas: list[float]
    random_phase1: list[float]


def first_reaching(sizes: list[int], errors: list[float], target: float) -> int | None:
    """The smallest size whose error is <= target (None when no size reaches it)."""
    return next((m for m, e in zip(sizes, errors) if e <= target), None)


def _relative_error(pred: Tensor, y: Tensor) -> float:
    return float(((pred - y) ** 2).mean() / y.var(unbiased=False))


def subset_order(cell: Cell) -> Tensor:
    """The cell's fixed permutation of its phase-1 rows (the prefixes are the nested subsets S_M)."""
    key = [cell.seed, cell.d, cell.r, cell.width, PERMUTATION_STREAM]
    return torch.as_tensor(np.random.default_rng(np.random.SeedSequence(key)).permutation(len(cell.real1[1])))


def kcenter_greedy(X: Tensor, m: int, first: int) -> Tensor:
    """Indices of m rows of X chosen by greedy farthest-point selection from row ``first``: each new centre is the
    row farthest (Euclidean) from the centres so far (a 2-approximation of the k-center objective)."""
    chosen = [first]
    dist = (X - X[first]).pow(2).sum(1)
    for _ in range(m - 1):
        nxt = int(torch.argmax(dist))
        chosen.append(nxt)
        dist = torch.minimum(dist, (X - X[nxt]).pow(2).sum(1))
    return torch.as_tensor(chosen, device=X.device)


def whole_algorithm(cell: Cell, cfg: Config, Xs: Tensor, ys: Tensor, lambdas: list[float]) -> tuple[float, float,
                                                                                                      Tensor]:
    """(test error, chosen lam, W_1): both phases on the subset (Xs, ys), lam chosen by the error on the real
    phase-2 rows."""
    W1 = first_layer(cell, Xs, ys, cfg)
    (Xv, yv), (Xt, yt) = cell.real2, cell.test
    Phi, Phi_v, Phi_t = (features(W1, cell.init.b, Z) for Z in (Xs, Xv, Xt))
    heads = [ridge(Phi, ys, lam) for lam in lambdas]
    best = int(np.argmin([_relative_error(Phi_v @ a, yv) for a in heads]))
    return _relative_error(Phi_t @ heads[best], yt), lambdas[best], W1


def kcenter_error(cell: Cell, cfg: Config, m: int, lambdas: list[float]) -> float:
    """Test error of the whole algorithm on the k-center coreset of m phase-1 rows (module docstring)."""
    X, y = cell.real1
    idx = kcenter_greedy(X, m, int(subset_order(cell)[0]))
    return whole_algorithm(cell, cfg, X[idx], y[idx], lambdas)[0]


def real_data_curves(cell: Cell, cfg: Config, sizes: list[int], lambdas: list[float]) -> Curves:
    """Both baselines' test errors at every size of ``sizes`` (see the module docstring)."""
    X, y = cell.real1
    order = subset_order(cell).to(X.device)
    subset, chosen, phase1_only = [], [], []
    for m in sizes:
        err, lam, W1 = whole_algorithm(cell, cfg, X[order[:m]], y[order[:m]], lambdas)
        subset.append(err)
        chosen.append(lam)
        phase1_only.append(_relative_error(with_real_phase2(cell, W1, cfg)(cell.test[0]), cell.test[1]))
    return Curves(list(sizes), subset, chosen, phase1_only)
