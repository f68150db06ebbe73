"""Stage ``prepare``: draw the datasets and removal subsets and store them as Parquet, with their provenance."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from paperdag.io import write_json
from paperdag.stage import StageContext

from .data import DATA_FILE, SUBSETS_FILE, cell_rng, coherent_subsets, random_subsets, sample_logistic, write_data


def prepare(ctx: StageContext) -> dict[str, float]:
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
    write_data(ctx.out / DATA_FILE, blocks)
    n, d, k, kind, s, idx = zip(*subset_rows, strict=True)
    pq.write_table(
        pa.table(
            {
                "n": pa.array(n, pa.int32()),
                "d": pa.array(d, pa.int32()),
                "k": pa.array(k, pa.int32()),
                "kind": pa.array(kind),
                "subset": pa.array(s, pa.int32()),
                "indices": pa.array([r.tolist() for r in idx], pa.list_(pa.int64())),
            }
        ),
        ctx.out / SUBSETS_FILE,
    )
    write_json(
        ctx.out / "provenance.json",
        {
            "source": "procedural (no download): numpy PCG64, one SeedSequence([seed, cell...]) per draw",
            "model": "x ~ N(0, I_d); theta* = theta_norm * uniform unit vector; y ~ Bernoulli(sigmoid(x . theta*))",
            "seed": p.seed,
            "theta_norm": p.theta_norm,
            "rows_per_d": {"train": n_max, "test": p.n_test},
            "theta_star": theta_stars,
        },
    )
    return {"subsets": float(len(subset_rows)), "rows": float(sum(len(b[3]) for b in blocks))}
