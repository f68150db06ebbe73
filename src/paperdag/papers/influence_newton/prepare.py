"""Stage ``prepare``: draw the datasets and removal subsets and store them as Parquet, with their provenance."""

from __future__ import annotations

from paperdag.io import write_json, write_table
from paperdag.stage import StageContext

from .data import cell_rng, coherent_subsets, random_subsets, sample_logistic, subsets_table, write_data
from .params import Params

DATA_FILE = "data.parquet"
SUBSETS_FILE = "subsets.parquet"


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """data.parquet (train + test rows per d), subsets.parquet (random per cell, coherent at the group cell)."""
    p = ctx.params
    n_max = max(p.n_grid)
    blocks, subset_rows, theta_stars = [], [], {}
    for d in p.d_grid:
        X, y, theta_stars[d] = sample_logistic(cell_rng(p.seed, d), n_max + p.n_test, d, p.theta_norm)
        blocks += [(d, "train", X[:n_max], y[:n_max]), (d, "test", X[n_max:], y[n_max:])]
        for n in p.n_grid:
            for k in p.k_grid:
                draws = {"random": random_subsets(cell_rng(p.seed, n, d, k), n, k, p.n_subsets)}
                if (n, d) == (p.group_n, p.group_d):
                    draws["coherent"] = coherent_subsets(cell_rng(p.seed, n, d, k, 1), X[:n], y[:n], k, p.n_subsets)
                for kind, idx in draws.items():
                    subset_rows += [(n, d, k, kind, s, row) for s, row in enumerate(idx)]
    write_data(ctx.output(DATA_FILE), blocks)
    write_table(ctx.output(SUBSETS_FILE), subsets_table(subset_rows))
    write_json(ctx.output("provenance.json"), {
        "source": "procedural (no download): numpy PCG64, one SeedSequence([seed, cell...]) per draw",
        "model": "x ~ N(0, I_d); theta* = theta_norm * uniform unit vector; y ~ Bernoulli(sigmoid(x . theta*))",
        "seed": p.seed,
        "theta_norm": p.theta_norm,
        "rows_per_d": {"train": n_max, "test": p.n_test},
        "theta_star": theta_stars,
    })
    return {"subsets": float(len(subset_rows)), "rows": float(sum(len(b[3]) for b in blocks))}
