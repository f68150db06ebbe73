"""Stage ``prepare``: draw the train and test programs (task.py) and store them as Parquet, with provenance."""

from __future__ import annotations

import hashlib

from paperdag.io import write_json, write_table
from paperdag.stage import StageContext

from .data import draw_programs
from .params import Params

DATA_FILE = "programs.parquet"


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """programs.parquet (prompt, answer, value, sequential, split) and provenance.json."""
    d = ctx.params.data
    cols = draw_programs(ctx.rng, d.n_statements, d.p_var, d.shuffle_prob, d.n_train, d.n_test)
    write_table(ctx.output(DATA_FILE), cols)
    digest = hashlib.sha256(ctx.output(DATA_FILE).read_bytes()).hexdigest()
    write_json(ctx.output("provenance.json"), {
        "source": "procedural (no download): straight-line programs mod 10, numpy PCG64 seeded from (seed, stage)",
        "generator": "paperdag.papers.diffusearch.task.sample_program", "seed": ctx.params.seed, "sha256": digest,
    })
    test = [s for s, split in zip(cols["sequential"], cols["split"], strict=True) if split == "test"]
    return {"programs": float(len(cols["split"])), "test_sequential_share": sum(test) / len(test)}
