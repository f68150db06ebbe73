"""Stage ``prepare``: the tasks (basis U and link C) of every cell, stored as Parquet with their provenance."""

from __future__ import annotations

import hashlib

import pyarrow as pa

from paperdag.io import write_json, write_table
from paperdag.stage import StageContext

from .design import all_cells
from .params import Params
from .task import make_task, task_rng

TASKS_FILE = "tasks.parquet"


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """tasks.parquet (seed, d, r, U, C per (seed, d, r)) and provenance.json (generator, sha256 of tasks and tests)."""
    p = ctx.params
    keys = sorted({(s, d, r) for s, d, r, _ in all_cells(p.seed, p.grid, p.compare)})
    rows, tests = [], hashlib.sha256()
    for s, d, r in keys:
        task = make_task(s, d, r)
        rows.append({"seed": s, "d": d, "r": r, "U": task.U.flatten().tolist(), "C": task.C.flatten().tolist()})
        tests.update(task.sample(task_rng(s, d, r, "test"), p.data.n_test)[0].numpy().tobytes())
    write_table(ctx.output(TASKS_FILE), pa.Table.from_pylist(rows))
    write_json(ctx.output("provenance.json"), {
        "source": "procedural (no download): numpy PCG64, SeedSequence([seed, d, r, stream]) per task and stream",
        "model": "x ~ N(0, I_d), y = z^T C z - tr C, z = U^T x, C = c (I + J/2), Var y = 1 (task.py)",
        "streams": ["basis", "phase1", "phase2", "test"], "seed": p.seed,
        "sha256_tasks": hashlib.sha256(ctx.output(TASKS_FILE).read_bytes()).hexdigest(),
        "sha256_test_inputs": tests.hexdigest(),
    })
    return {"tasks": float(len(rows))}
