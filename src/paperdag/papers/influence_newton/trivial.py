"""Trivial estimates of the leave-T-out parameters theta_T: the rungs of the baseline ladder below IF and NS.

With theta_hat, H = hess L(theta_hat) and g_T = sum_{i in T} grad l_i(theta_hat) as in attribution.py:
    no update:       theta_hat                                  (the estimate that ignores the removal),
    curvature step:  theta_hat + g_T / h,  h = tr(H) / d        (a gradient step scaled by the mean curvature: the
                                                                 identity-Hessian influence of Grad-Dot, Charpiat et
                                                                 al. 2019, NeurIPS, in parameter space),
    diagonal step:   theta_hat + diag(H)^-1 g_T                 (the diagonal-Hessian approximation of Optimal Brain
                                                                 Damage, LeCun, Denker & Solla 1990, NeurIPS).
Neither needs a d x d solve: they are what an influence estimate costs without the Hessian's off-diagonal structure,
so IF and NS are competent only where their curvature beats them.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import torch
from torch import Tensor

from .attribution import removal_terms
from .glm import Loss
from .problem import LOSS, cells, problems

RUNGS = {"curvature": "curvature step theta_hat + g_T d / tr H", "diagonal": "diagonal step theta_hat + diag(H)^-1 g_T"}


def trivial_steps(X: Tensor, y: Tensor, idx: Tensor, theta_hat: Tensor, H: Tensor, loss: Loss) -> dict[str, Tensor]:
    """The curvature and diagonal steps (module docstring) for each subset T (row of ``idx``): name -> S x d."""
    g, _ = removal_terms(X, y, idx, theta_hat, loss)
    return {"curvature": theta_hat + g * (H.shape[0] / torch.trace(H)),
            "diagonal": theta_hat + g / torch.diagonal(H)}


def trivial_estimates(data: Path, subsets: Path, fits: Path, ridge: float, device: str) -> pa.Table:
    """Keys n, d, k, kind, subset and theta_<rung> (list<float64>) for every subset of the subsets table at
    ``subsets``, on the data and full fits at ``data`` and ``fits``."""
    tables = []
    for prob, rows in problems(data, subsets, fits, ridge, device):
        for _, _, cell, idx in cells(rows, device):
            steps = trivial_steps(prob.X, prob.y, idx, prob.theta_hat, prob.H, LOSS)
            table = cell.select(["n", "d", "k", "kind", "subset"])
            for name, theta in steps.items():
                table = table.append_column(f"theta_{name}", pa.array(theta.cpu().tolist(), pa.list_(pa.float64())))
            tables.append(table)
    return pa.concat_tables(tables)
