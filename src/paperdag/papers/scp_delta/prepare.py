"""Stage ``prepare``: per seed the private shards, canaries and held-out lines, then the public corpus of the same
templates with names and codes disjoint from all of them, as Parquet with their provenance."""

from __future__ import annotations

import hashlib

import numpy as np

from paperdag.io import write_json, write_table
from paperdag.stage import StageContext

from .params import Params
from .records import draw_private_set, draw_public_set

PUBLIC_FILE = "public.parquet"
PRIVATE_FILE = "private.parquet"
CANARY_FILE = "canaries.parquet"
PUBLIC_STREAM = 10**6  # the public draw's seed index, beyond any private seed index s < n_seeds <= 20


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """private.parquet (seed, split, text: one line per row, in training order), canaries.parquet (seed, where,
    name, code), public.parquet (split, text) and provenance.json (generators, seeds, sha256)."""
    r, pub = ctx.params.records, ctx.params.public
    lines: dict[str, list] = {"seed": [], "split": [], "text": []}
    canaries: dict[str, list] = {"seed": [], "where": [], "name": [], "code": []}
    private_names: set[str] = set()
    for s in range(ctx.params.n_seeds):
        rng = np.random.default_rng([ctx.params.seed, s])
        splits, drawn, names = draw_private_set(rng, r.n_records, r.n_canaries, r.n_duplicated, r.canary_reps,
                                                r.code_digits, r.n_heldout)
        private_names.update(names)
        for split, text in splits.items():
            lines["seed"] += [s] * len(text)
            lines["split"] += [split] * len(text)
            lines["text"] += text
        for k in drawn:
            for key, value in (("seed", s), ("where", k.where), ("name", k.name), ("code", k.code)):
                canaries[key].append(value)
    rng = np.random.default_rng([ctx.params.seed, PUBLIC_STREAM])
    public = draw_public_set(rng, pub.n_lines, pub.code_fraction, r.code_digits, frozenset(private_names),
                             frozenset(canaries["code"]))
    n_val = round(pub.val_fraction * len(public))
    write_table(ctx.output(PUBLIC_FILE), {"split": ["val"] * n_val + ["train"] * (len(public) - n_val),
                                          "text": public})
    write_table(ctx.output(PRIVATE_FILE), lines)
    write_table(ctx.output(CANARY_FILE), canaries)
    sha = {f: hashlib.sha256(ctx.output(f).read_bytes()).hexdigest() for f in (PUBLIC_FILE, PRIVATE_FILE)}
    write_json(ctx.output("provenance.json"), {
        "public": {"source": "procedural records and canary-format lines (records.draw_public_set), names and codes "
                   "disjoint from every private one, numpy PCG64 seeded by (seed, 10^6)", "sha256": sha[PUBLIC_FILE]},
        "private": {"source": "procedural templates and canaries (records.py), numpy PCG64 seeded by (seed, s)",
                    "sha256": sha[PRIVATE_FILE], "n_seeds": ctx.params.n_seeds},
    })
    return {"public_lines": len(public), "private_lines": len(lines["text"]), "canaries": len(canaries["code"])}
