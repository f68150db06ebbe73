"""Stage ``prepare``: the public corpus (stdlib sources) and, per seed, the private shards, canaries and held-out
lines, as Parquet with their provenance."""

from __future__ import annotations

import hashlib

import numpy as np

from paperdag.common.corpus import collect_stdlib_corpus, corpus_provenance, write_corpus
from paperdag.io import write_json, write_table
from paperdag.stage import StageContext

from .params import Params
from .records import draw_private_set

CORPUS_FILE = "corpus.parquet"
PRIVATE_FILE = "private.parquet"
CANARY_FILE = "canaries.parquet"


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """corpus.parquet (path, split, text), private.parquet (seed, split, text: one line per row, in training
    order), canaries.parquet (seed, where, name, code) and provenance.json (sources, versions, sha256)."""
    c, r = ctx.params.corpus, ctx.params.records
    columns = collect_stdlib_corpus(list(c.packages), c.max_bytes, c.val_fraction)
    write_corpus(ctx.output(CORPUS_FILE), columns)
    lines: dict[str, list] = {"seed": [], "split": [], "text": []}
    canaries: dict[str, list] = {"seed": [], "where": [], "name": [], "code": []}
    for s in range(ctx.params.n_seeds):
        rng = np.random.default_rng([ctx.params.seed, s])
        splits, drawn = draw_private_set(rng, r.n_records, r.n_canaries, r.n_duplicated, r.canary_reps,
                                         r.code_digits, r.n_heldout)
        for split, text in splits.items():
            lines["seed"] += [s] * len(text)
            lines["split"] += [split] * len(text)
            lines["text"] += text
        for k in drawn:
            for key, value in (("seed", s), ("where", k.where), ("name", k.name), ("code", k.code)):
                canaries[key].append(value)
    write_table(ctx.output(PRIVATE_FILE), lines)
    write_table(ctx.output(CANARY_FILE), canaries)
    private_sha = hashlib.sha256(ctx.output(PRIVATE_FILE).read_bytes()).hexdigest()
    write_json(ctx.output("provenance.json"), {
        "public": corpus_provenance(columns) | {"packages": list(c.packages)},
        "private": {"source": "procedural templates and canaries (records.py), numpy PCG64 seeded by (seed, s)",
                    "sha256": private_sha, "n_seeds": ctx.params.n_seeds},
    })
    return {"corpus_documents": len(columns["path"]), "private_lines": len(lines["text"]),
            "canaries": len(canaries["code"])}
