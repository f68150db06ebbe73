"""Stage ``train``: the full fit theta_hat = argmin_theta sum_i l_i(theta) + ridge/2 ||theta||^2 for every (n, d)."""

from __future__ import annotations

import pyarrow as pa
import torch

from paperdag.io import write_table
from paperdag.stage import StageContext

from .data import load_split
from .glm import newton
from .params import Params
from .prepare import DATA_FILE
from .problem import LOSS

FITS_FILE = "fits.parquet"


def train(ctx: StageContext[Params]) -> dict[str, float]:
    """fits.parquet: n, d, theta_hat, grad_norm, iterations (damped Newton from theta = 0 to ``newton_tol``)."""
    p, data = ctx.params, ctx.input("prepare", DATA_FILE)
    rows = []
    grid = [(n, d) for d in p.d_grid for n in p.n_grid]
    for n, d in ctx.progress(grid, desc="full fits"):
        X, y = (torch.as_tensor(a, device=ctx.device) for a in load_split(data, d, "train", n))
        W = torch.ones(1, n, dtype=X.dtype, device=ctx.device)
        fit = newton(X, y, W, torch.zeros(1, d, dtype=X.dtype, device=ctx.device), LOSS, p.ridge, p.newton_tol,
                     p.newton_max_iter)
        rows.append((n, d, fit.theta[0].tolist(), fit.grad_norm.item(), fit.iterations.item()))
    n, d, theta, grad, iters = zip(*rows, strict=True)
    write_table(ctx.output(FITS_FILE), pa.table({
        "n": pa.array(n, pa.int32()), "d": pa.array(d, pa.int32()),
        "theta_hat": pa.array(theta, pa.list_(pa.float64())), "grad_norm": grad, "iterations": iters,
    }))
    return {"max_grad_norm": max(grad), "max_iterations": float(max(iters))}
