"""Stage ``distill_<i>``: memory-to-target search (budget.memory_to_target) on shard i of the scaling grid."""

from __future__ import annotations

import json

import pyarrow as pa

from paperdag.io import read_table, save_tensors, write_table
from paperdag.stage import StageContext

from .budget import memory_to_target
from .cell import build_cell
from .design import config, grid_cells
from .params import Params
from .reference import REFERENCES_FILE
from .task import principal_angles, span_energy

SEARCH_FILE = "search.parquet"
SETS_FILE = "sets.safetensors"


def distill_grid(ctx: StageContext[Params], shard: int, shards: int) -> dict[str, float]:
    """search.parquet (per cell: M1*, M2*, memory*, errors met, span energy) and the distilled sets."""
    p = ctx.params
    cfg = config(p.data, p.network, p.distill)
    refs = {(t["seed"], t["d"], t["r"], t["width"]): t["e_ref"]
            for t in read_table(ctx.input("reference", REFERENCES_FILE)).to_pylist()}
    rows, tensors = [], {}
    for key in ctx.progress(grid_cells(p.seed, p.grid)[shard::shards], desc="cells"):
        s, d, r, L = key
        cell = build_cell(s, d, r, L, cfg, ctx.device)
        found = memory_to_target(cell, cfg, p.grid.m1, p.grid.m2, p.claims.tol, refs[key])
        X1 = found.sets["phase1_x"]
        rows.append({"seed": s, "d": d, "r": r, "width": L, "e_ref": refs[key], "m1": found.m1, "m2": found.m2,
                     "memory": found.memory(d), "phase1_errors": json.dumps(found.phase1_errors),
                     "total_errors": json.dumps(found.total_errors),
                     "energy_phase1": span_energy(X1, cell.task.U),
                     "energy_phase2": span_energy(found.sets["phase2_x"], cell.task.U) if found.m2 else None,
                     "max_angle_phase1": float(principal_angles(X1, cell.task.U).max()) if len(X1) >= r else None})
        tensors |= {f"s{s}_d{d}_r{r}_L{L}/{name}": t.cpu() for name, t in found.sets.items()}
    write_table(ctx.output(SEARCH_FILE), pa.Table.from_pylist(rows))
    save_tensors(ctx.output(SETS_FILE), tensors)
    return {"cells": float(len(rows)), "censored": float(sum(r["memory"] is None for r in rows))}
