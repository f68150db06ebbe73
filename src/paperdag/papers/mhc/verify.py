"""Stage ``verify``: the manifold check on the trained models of the base cell. For every seed of mHC and every
sub-layer, over every validation token: the H_res the model uses (t = ``sinkhorn_iters``) and its logits' Sinkhorn
limit (iterated in float64 to ``manifold_tol`` or ``sinkhorn_cap`` steps, manifold.py), each with max |row sum - 1|,
max |column sum - 1| and the min entry, and whether it lies within ``manifold_tol`` of the Birkhoff polytope; for HC
(the unconstrained contrast) the H_res it uses."""

from __future__ import annotations

import pyarrow as pa

from paperdag.common.corpus import fixed_batches, load_split_tokens
from paperdag.io import load_tensors, write_table
from paperdag.stage import StageContext

from .manifold import converged_checks, layer_checks
from .model import StreamGPT
from .params import Params
from .prepare import CORPUS_FILE
from .train import WEIGHTS_FILE, run_states
from .training import model_configs

MANIFOLD_FILE = "manifold.parquet"
CHECKED = ("mhc", "hc")
LIMIT = ("limit_max_row_dev", "limit_max_col_dev", "limit_min_entry", "limit_steps", "limit_passed")


def verify(ctx: StageContext[Params]) -> dict[str, float]:
    """manifold.parquet (connection, seed, layer, max_row_dev, max_col_dev, min_entry, passed: the H_res used;
    limit_*: mHC's Sinkhorn limit, null for HC) for every run of the base cell; returns the number of failing
    (seed, layer) pairs of mHC's limit and mHC's worst deviations (limit and as used)."""
    p, tol = ctx.params, ctx.params.claims.manifold_tol
    batches = fixed_batches(load_split_tokens(ctx.input("prepare", CORPUS_FILE), "val"), p.train.eval_batches,
                            p.train.batch_size, p.model.context, seed=p.seed)
    model_cfg, stream_cfg = model_configs(p.model)
    rows = []
    for kind in CHECKED:
        for run, state in run_states(load_tensors(ctx.input(f"train_{kind}_base", WEIGHTS_FILE))).items():
            model = StreamGPT(model_cfg, kind, stream_cfg).to(ctx.device)
            model.load_state_dict(state)
            if kind == "mhc":
                pairs = [(c.trained, (c.limit.max_row_dev, c.limit.max_col_dev, c.limit.min_entry, c.max_steps,
                                      c.limit.passed))
                         for c in converged_checks(model, batches, tol, p.claims.sinkhorn_cap, ctx.device)]
            else:
                pairs = [(c, (None,) * len(LIMIT)) for c in layer_checks(model, batches, tol, ctx.device)]
            for layer, (c, limit) in enumerate(pairs):
                rows.append(dict(connection=kind, seed=p.seeds.first_seed + run, layer=layer, max_row_dev=c.max_row_dev,
                                 max_col_dev=c.max_col_dev, min_entry=c.min_entry, passed=c.passed,
                                 **dict(zip(LIMIT, limit, strict=True))))
    write_table(ctx.output(MANIFOLD_FILE), pa.Table.from_pylist(rows))
    mhc = [r for r in rows if r["connection"] == "mhc"]
    return {"mhc_limit_failed_layers": float(sum(not r["limit_passed"] for r in mhc)),
            "mhc_limit_max_dev": max(max(r["limit_max_row_dev"], r["limit_max_col_dev"]) for r in mhc),
            "mhc_used_max_dev": max(max(r["max_row_dev"], r["max_col_dev"]) for r in mhc),
            "mhc_limit_max_steps": float(max(r["limit_steps"] for r in mhc))}
