"""Stage ``verify``: the certificate of every generated task (certificate.py): cycle consistency with property
tests, uniqueness over the whole DSL, and the two weaker checks it is compared with. The table also holds each
task and the seed of its random property grids, so ``paperdag verify a2rbench`` redoes every certificate from this
folder alone (recheck.py)."""

from __future__ import annotations

from dataclasses import asdict

import pyarrow as pa

from paperdag.io import read_table, write_table
from paperdag.stage import StageContext

from .certificate import certify, exhaustive_grids, property_inputs
from .params import Params
from .primitives import DIMS, names, registry
from .tasks import from_row, to_row
from .train import TASKS_FILE

CERTIFICATES_FILE = "certificates.parquet"


def verify(ctx: StageContext[Params]) -> dict[str, float]:
    """certificates.parquet: task + forward/single/cycle/consistent/min_depth/answers/unique/accepted + the DSL
    (alphabet, max_depth) and property grids (property_seed, property_samples) checked + rule_valid (the original
    task of the same rule passed the cycle check: expansions reuse validated rules only)."""
    k, depth, n_random = ctx.params.dsl.alphabet, ctx.params.dsl.max_depth, ctx.params.verify.property_samples
    exhaustive = {d: exhaustive_grids(d, k) for d in DIMS}
    rows = []
    for task in ctx.progress([from_row(r) for r in read_table(ctx.input("train", TASKS_FILE)).to_pylist()],
                             desc="tasks"):
        seed = int(ctx.rng.integers(2**62))
        cert = certify(task, registry(task.dim, k), names(task.dim, k), depth, exhaustive[task.dim],
                       property_inputs(seed, n_random, task.query.shape, k), ctx.device)
        rows.append(to_row(task) | asdict(cert) | {"alphabet": k, "max_depth": depth, "property_seed": seed,
                                                   "property_samples": n_random})
    valid = {r["task_id"]: r["cycle"] for r in rows if r["variant"] == "original"}
    rows = [r | {"rule_valid": valid[r["parent"]]} for r in rows]
    write_table(ctx.output(CERTIFICATES_FILE), pa.Table.from_pylist(rows))
    return {"tasks": float(len(rows)), "accepted": float(sum(r["accepted"] and r["rule_valid"] for r in rows))}
