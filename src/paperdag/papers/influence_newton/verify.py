"""Stage ``verify``: the certificate of the paper's local conditions, per removal cell (n, d, k, kind).

A cell passes when, for every subset T in it,
    ||grad L(theta_hat)|| <= cert_grad_tol                                   (theta_hat is a minimiser),
    lambda_min(hess L_-T(theta_hat)) > cert_min_eig (n - k)                  (local strong convexity at theta_hat),
    lambda_min(hess L_-T(theta_NS))  > cert_min_eig (n - k)                  (... and at the Newton step),
with L_-T the leave-T-out loss. Gradient and Hessians are recomputed here from the data, not read from train.
A failing cell is flagged in the table; evaluate leaves it out of every fit and reports how many there were.
"""

from __future__ import annotations

import pyarrow as pa
import torch

from paperdag.io import write_table
from paperdag.stage import StageContext

from .attribution import estimate, removal_mask
from .glm import gradient, hessian
from .params import Params
from .prepare import DATA_FILE, SUBSETS_FILE
from .problem import LOSS, cells, problems
from .train import FITS_FILE

CERTIFICATE_FILE = "certificate.parquet"
SCHEMA = pa.schema(
    [("n", pa.int32()), ("d", pa.int32()), ("k", pa.int32()), ("kind", pa.string()), ("subsets", pa.int32()),
     ("grad_norm", pa.float64()), ("min_eig_hat", pa.float64()), ("min_eig_ns", pa.float64()),
     ("eig_floor", pa.float64()), ("passed", pa.bool_())]
)


def verify(ctx: StageContext[Params]) -> dict[str, float]:
    """certificate.parquet: per cell the gradient norm, the smallest eigenvalues, the threshold and ``passed``."""
    p = ctx.params
    rows = []
    for prob, subsets in problems(ctx.input("prepare", DATA_FILE), ctx.input("prepare", SUBSETS_FILE),
                                  ctx.input("train", FITS_FILE), p.ridge, ctx.device):
        ones = torch.ones(1, prob.n, dtype=prob.X.dtype, device=ctx.device)
        grad_norm = gradient(prob.X, prob.y, ones, prob.theta_hat.unsqueeze(0), LOSS, p.ridge).norm().item()
        for k, kind, _, idx in cells(subsets, ctx.device):
            est = estimate(prob.X, prob.y, idx, prob.theta_hat, prob.H, LOSS)
            at_ns = hessian(prob.X, prob.y, removal_mask(prob.n, idx), est.theta_ns, LOSS, p.ridge)
            eig_hat = torch.linalg.eigvalsh(est.hess_out)[:, 0].min().item()
            eig_ns = torch.linalg.eigvalsh(at_ns)[:, 0].min().item()
            floor = p.cert_min_eig * (prob.n - k)
            passed = grad_norm <= p.cert_grad_tol and eig_hat > floor and eig_ns > floor
            rows.append(dict(n=prob.n, d=prob.d, k=k, kind=kind, subsets=idx.shape[0], grad_norm=grad_norm,
                             min_eig_hat=eig_hat, min_eig_ns=eig_ns, eig_floor=floor, passed=passed))
    write_table(ctx.output(CERTIFICATE_FILE), pa.Table.from_pylist(rows, schema=SCHEMA))
    failed = sum(not r["passed"] for r in rows)
    return {"cells": float(len(rows)), "failed_cells": float(failed),
            "max_grad_norm": max(r["grad_norm"] for r in rows)}
