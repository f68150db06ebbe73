"""Stage ``reference``: the full-data network of every cell and its sanity baselines (random features, zero)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from paperdag.io import read_table, write_table
from paperdag.stage import StageContext

from .cell import build_cell, error, random_features
from .design import all_cells, config
from .params import Params
from .prepare import TASKS_FILE
from .task import span_energy

REFERENCES_FILE = "references.parquet"


def reference(ctx: StageContext[Params]) -> dict[str, float]:
    """references.parquet: seed, d, r, width, e_ref, e_random_features, energy of W_1 in span(U)."""
    p = ctx.params
    cfg = config(p.data, p.network)
    tasks = {(t["seed"], t["d"], t["r"]): t["U"] for t in read_table(ctx.input("prepare", TASKS_FILE)).to_pylist()}
    rows = []
    for s, d, r, L in ctx.progress(all_cells(p.seed, p.grid, p.compare), desc="reference networks"):
        cell = build_cell(s, d, r, L, cfg, ctx.device)
        if not np.allclose(cell.task.U.flatten().cpu().numpy(), tasks[s, d, r], atol=1e-6):
            raise RuntimeError(f"task ({s}, {d}, {r}) differs from the prepared one")
        rows.append({"seed": s, "d": d, "r": r, "width": L, "e_ref": error(cell, cell.reference),
                     "e_random_features": error(cell, random_features(cell, cfg)),
                     "energy_w1": span_energy(cell.reference.W1, cell.task.U)})
    write_table(ctx.output(REFERENCES_FILE), pa.Table.from_pylist(rows))
    return {"e_ref_max": max(r["e_ref"] for r in rows),
            "e_random_features_min": min(r["e_random_features"] for r in rows)}
