"""Stage ``prepare``: the DSL's primitive table and one seed per benchmark, with their provenance; with the smollm2
LLM solver, the model's too (package version, wheel and GGUF sha256, checked here)."""

from __future__ import annotations

import hashlib

import numpy as np

from paperdag.io import write_json, write_table
from paperdag.stage import StageContext

from .params import Params
from .primitives import DIMS, registry
from .smollm2 import provenance

PRIMITIVES_FILE = "primitives.parquet"
SEEDS_FILE = "provenance.json"


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """primitives.parquet (dim, name, inverse, kind) and provenance.json (generator, bench seeds, sha256, LLM)."""
    k = ctx.params.dsl.alphabet
    rows = [{"dim": d, "name": p.name, "inverse": p.inverse or "", "kind": p.kind}
            for d in DIMS for p in registry(d, k).values()]
    write_table(ctx.output(PRIMITIVES_FILE), {key: [r[key] for r in rows] for key in rows[0]})
    seeds = [int(s) for s in ctx.rng.integers(0, 2**31, size=ctx.params.tasks.benches)]
    write_json(ctx.output(SEEDS_FILE), {
        "source": "procedural (no download): a program generator over the DSL in primitives.py, numpy PCG64",
        "numpy": np.__version__, "bench_seeds": seeds, "alphabet": k,
        "primitives_sha256": hashlib.sha256(ctx.output(PRIMITIVES_FILE).read_bytes()).hexdigest(),
        "llm": provenance() if ctx.params.solve.llm_backend == "smollm2" else None,
    })
    return {"primitives": float(len(rows)), "benches": float(len(seeds))}
