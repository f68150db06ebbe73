"""Stage ``distill_<i>``: memory-to-target search (budget.memory_to_target) on shard i of the scaling grid."""

from __future__ import annotations

import json

import pyarrow as pa

from paperdag.io import read_table, save_tensors, write_table
from paperdag.stage import StageContext

from .budget import memory_to_target
from .cell import build_cell
from .design import config, grid_cells, target_excess
from .params import Params
from .reference import REFERENCES_FILE
from .task import principal_angles, span_energy

SEARCH_FILE = "search.parquet"
SETS_FILE = "sets.safetensors"


def distill_grid(ctx: StageContext[Params], shard: int, shards: int) -> dict[str, float]:
    """search.parquet (per cell and target, loose and near: M1*, M2*, memory*, errors met, span energy) and the
    distilled sets."""
    p = ctx.params
    cfg = config(p.data, p.network, p.distill)
    refs = {(t["seed"], t["d"], t["r"], t["width"]): t["e_ref"]
            for t in read_table(ctx.input("reference", REFERENCES_FILE)).to_pylist()}
    rows, tensors = [], {}
    for key in ctx.progress(grid_cells(p.seed, p.grid)[shard::shards], desc="cells"):
        s, d, r, L = key
        cell = build_cell(s, d, r, L, cfg, ctx.device)
        targets = target_excess(p.claims, refs[key])
        found = memory_to_target(cell, cfg, p.grid.m1, p.grid.m2, targets, refs[key])
        row = {"seed": s, "d": d, "r": r, "width": L, "e_ref": refs[key],
               "phase1_errors": json.dumps(next(iter(found.values())).phase1_errors)}
        for name, f in found.items():
            X1 = f.sets["phase1_x"]
            row |= {f"excess_{name}": targets[name], f"m1_{name}": f.m1, f"m2_{name}": f.m2, f"memory_{name}": f.memory(d),
                    f"total_errors_{name}": json.dumps(f.total_errors),
                    f"energy_phase1_{name}": span_energy(X1, cell.task.U),
                    f"energy_phase2_{name}": span_energy(f.sets["phase2_x"], cell.task.U) if f.m2 else None,
                    f"max_angle_phase1_{name}": float(principal_angles(X1, cell.task.U).max()) if len(X1) >= r
                    else None}
            tensors |= {f"s{s}_d{d}_r{r}_L{L}/{name}/{k}": t.cpu().clone() for k, t in f.sets.items()}
        rows.append(row)
    write_table(ctx.output(SEARCH_FILE), pa.Table.from_pylist(rows))
    save_tensors(ctx.output(SETS_FILE), tensors)
    return {"cells": float(len(rows)), **{f"censored_{t}": float(sum(r[f"memory_{t}"] is None for r in rows))
                                          for t in ("loose", "near")}}
