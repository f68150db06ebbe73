"""Stage ``train``: generate and expand the tasks of every benchmark (the program generator stands in for the
paper's LLM generator), stored unverified as tasks.parquet."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from paperdag.io import read_json, write_table
from paperdag.stage import StageContext

from .generate import generate_bench
from .params import Params
from .prepare import SEEDS_FILE
from .tasks import to_row

TASKS_FILE = "tasks.parquet"


def train(ctx: StageContext[Params]) -> dict[str, float]:
    """tasks.parquet: every generated task (originals, lossy injections, expansions) with its rule."""
    seeds = read_json(ctx.input("prepare", SEEDS_FILE))["bench_seeds"]
    tasks = [t for b, s in enumerate(ctx.progress(seeds, desc="benchmarks"))
             for t in generate_bench(np.random.default_rng(s), b, ctx.params.dsl, ctx.params.tasks)]
    write_table(ctx.output(TASKS_FILE), pa.Table.from_pylist([to_row(t) for t in tasks]))
    return {"tasks": float(len(tasks)), "lossy": float(sum(t.lossy for t in tasks))}
