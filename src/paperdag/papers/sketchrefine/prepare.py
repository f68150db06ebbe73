"""Stage ``prepare``: the procedural benchmark (benchmark.py) as Parquet, with its provenance."""

from __future__ import annotations

import hashlib
from importlib.metadata import version

import pyarrow as pa

from paperdag.io import write_json, write_table
from paperdag.stage import StageContext

from .benchmark import draw_level
from .params import Params
from .theorems import theorem_rows

THEOREMS_FILE = "theorems.parquet"


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """theorems.parquet (one row per definition) and provenance.json (generator, seed, rejections, sha256)."""
    p = ctx.params.theorems
    rows, rejected = [], {}
    for k in ctx.progress(p.lemma_counts, desc="levels"):
        level = draw_level(ctx.rng, k, p.per_level, p.max_draws, ctx.params.rlimit, p.n_inputs, p.input_bound,
                           p.const_bound, p.p_operand_input)
        if len(level.theorems) < p.per_level:
            raise RuntimeError(f"level {k}: only {len(level.theorems)} theorems kept in {p.max_draws} draws")
        rows += [r | {"level": k} for t in level.theorems for r in theorem_rows(t)]
        rejected[k] = {"proved_without_sketch": level.direct, "reference_sketch_failed": level.reference_failed}
    write_table(ctx.output(THEOREMS_FILE), pa.Table.from_pylist(rows))
    write_json(ctx.output("provenance.json"), {
        "source": "procedural (no download): numpy PCG64 seeded from (seed, stage)",
        "model": "x_j in [-B, B]; y_i = a_i * b_i + c_i; goal = interval box of the last y; lemmas = boxes of the "
                 "others", "checker": f"z3-solver {version('z3-solver')}, rlimit {ctx.params.rlimit} per step",
        "seed": ctx.params.seed, "rejected_draws": rejected,
        "sha256": hashlib.sha256(ctx.output(THEOREMS_FILE).read_bytes()).hexdigest(),
    })
    direct = sum(r["proved_without_sketch"] for r in rejected.values())
    return {"theorems": float(len({r["theorem"] for r in rows})), "rejected_proved_without_sketch": float(direct)}
