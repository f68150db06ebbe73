"""Stage ``retrain``: exact leave-T-out refits theta_T = argmin L_-T for every subset, next to theta_IF and theta_NS.

All subsets of one (n, d) problem are refit at once: batched Newton (glm.newton) started from theta_NS, stopped
at ||grad L_-T(theta_T)|| <= newton_tol (or at the float64 round-off floor, whose value is recorded).
"""

from __future__ import annotations

import pyarrow as pa
import torch

from paperdag.io import write_table
from paperdag.stage import StageContext

from .attribution import estimate, removal_mask
from .glm import newton
from .params import Params
from .prepare import DATA_FILE, SUBSETS_FILE
from .problem import LOSS, cells, problems
from .train import FITS_FILE

ESTIMATES_FILE = "estimates.parquet"


def retrain(ctx: StageContext[Params]) -> dict[str, float]:
    """estimates.parquet: n, d, k, kind, subset, theta_exact, theta_if, theta_ns, grad_norm, iterations."""
    p = ctx.params
    grid = problems(ctx.input("prepare", DATA_FILE), ctx.input("prepare", SUBSETS_FILE), ctx.input("train", FITS_FILE),
                    p.ridge, ctx.device)
    tables = []
    for prob, subsets in ctx.progress(list(grid), desc="(n, d) problems"):
        keys, masks, theta_if, theta_ns = [], [], [], []
        for _, _, rows, idx in cells(subsets, ctx.device):
            est = estimate(prob.X, prob.y, idx, prob.theta_hat, prob.H, LOSS)
            keys.append(rows.select(["n", "d", "k", "kind", "subset"]))
            masks.append(removal_mask(prob.n, idx))
            theta_if.append(est.theta_if)
            theta_ns.append(est.theta_ns)
        start = torch.cat(theta_ns)
        exact = newton(prob.X, prob.y, torch.cat(masks), start, LOSS, p.ridge, p.newton_tol, p.newton_max_iter)
        table = pa.concat_tables(keys)
        for name, value in [("theta_exact", exact.theta), ("theta_if", torch.cat(theta_if)), ("theta_ns", start)]:
            table = table.append_column(name, pa.array(value.cpu().tolist(), pa.list_(pa.float64())))
        table = table.append_column("grad_norm", pa.array(exact.grad_norm.cpu().numpy()))
        tables.append(table.append_column("iterations", pa.array(exact.iterations.cpu().numpy())))
    out = pa.concat_tables(tables)
    write_table(ctx.output(ESTIMATES_FILE), out)
    return {"refits": float(out.num_rows), "max_grad_norm": float(max(out["grad_norm"].to_pylist())),
            "max_iterations": float(max(out["iterations"].to_pylist()))}
