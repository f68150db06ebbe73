"""Stage ``compare``: distilled vs no-phase-1-matching vs random subset at equal memory, over seeds (budget.compare)."""

from __future__ import annotations

import pyarrow as pa

from paperdag.io import write_table
from paperdag.stage import StageContext

from .budget import compare as compare_methods
from .cell import build_cell
from .design import compare_cells, config
from .params import Params

COMPARE_FILE = "compare.parquet"


def compare(ctx: StageContext[Params]) -> dict[str, float]:
    """compare.parquet: seed, budget M (points), memory, each method's relative test error, span energies."""
    p = ctx.params
    cfg = config(p.data, p.network, p.distill)
    rows = []
    for s, d, r, L in ctx.progress(compare_cells(p.seed, p.compare), desc="seeds"):
        cell = build_cell(s, d, r, L, cfg, ctx.device)
        for m in p.compare.budgets:
            result = compare_methods(cell, m // 2, m // 2, cfg)
            rows.append({"seed": s, "budget": m, "memory": m * (d + 1)} | result)
    write_table(ctx.output(COMPARE_FILE), pa.Table.from_pylist(rows))
    return {"runs": float(len(rows))}
