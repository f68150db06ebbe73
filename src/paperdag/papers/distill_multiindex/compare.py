"""Stage ``compare``: the comparison cell over seeds: the distilled set at equal budgets, its memory-to-target
(budget.memory_to_target) and the real-data baselines' error curves (baselines.real_data_curves)."""

from __future__ import annotations

import pyarrow as pa

from paperdag.io import write_table
from paperdag.stage import StageContext

from .baselines import kcenter_error, real_data_curves
from .budget import distilled_error, memory_to_target
from .cell import build_cell, error
from .design import compare_cells, config
from .params import Params

COMPARE_FILE = "compare.parquet"


def compare(ctx: StageContext[Params]) -> dict[str, float]:
    """compare.parquet, one row per seed: e_ref, distilled errors per budget (M1 = M2 = M / 2), the distilled
    search's M1*, M2* at the loose target (None if censored), per subset size the baselines' errors and chosen ridge
    lam, and the k-center coreset's error at the ladder's size."""
    p, c = ctx.params, ctx.params.compare
    cfg = config(p.data, p.network, p.distill)
    rung = next(m for m in c.sizes if m >= c.headline)  # the ladder's size: the first subset size >= the headline
    rows = []
    for s, d, r, L in ctx.progress(compare_cells(p.seed, c), desc="seeds"):
        cell = build_cell(s, d, r, L, cfg, ctx.device)
        e_ref = error(cell, cell.reference)
        found = memory_to_target(cell, cfg, p.grid.m1, p.grid.m2, {"loose": p.claims.tol}, e_ref)["loose"]
        curves = real_data_curves(cell, cfg, c.sizes, c.ridges)
        rows.append({"seed": s, "e_ref": e_ref, "budgets": list(c.budgets),
                     "distilled": [distilled_error(cell, m // 2, m // 2, cfg) for m in c.budgets],
                     "m1": found.m1, "m2": found.m2, "sizes": curves.sizes, "random_subset": curves.random_subset,
                     "random_subset_ridge": curves.lambdas, "random_phase1": curves.random_phase1,
                     "kcenter_points": rung, "kcenter": kcenter_error(cell, cfg, rung, c.ridges)})
    write_table(ctx.output(COMPARE_FILE), pa.Table.from_pylist(rows))
    return {"seeds": float(len(rows)), "censored": float(sum(r["m2"] is None for r in rows))}
