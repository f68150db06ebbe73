"""Stage ``verify``: the manifold check on the trained models of the base cell. For every seed of mHC (and of HC, the
unconstrained contrast) and every sub-layer: max |row sum - 1|, max |column sum - 1| and the min entry of H_res
over every validation token, and whether it lies within ``manifold_tol`` of the Birkhoff polytope."""

from __future__ import annotations

import pyarrow as pa

from paperdag.common.corpus import fixed_batches, load_split_tokens
from paperdag.io import load_tensors, write_table
from paperdag.stage import StageContext

from .manifold import layer_checks
from .model import StreamGPT
from .params import Params
from .prepare import CORPUS_FILE
from .train import WEIGHTS_FILE, run_states
from .training import model_configs

MANIFOLD_FILE = "manifold.parquet"
CHECKED = ("mhc", "hc")


def verify(ctx: StageContext[Params]) -> dict[str, float]:
    """manifold.parquet (connection, seed, layer, max_row_dev, max_col_dev, min_entry, passed) for every run of the
    base cell; returns the number of failing (seed, layer) pairs per connection and mHC's worst deviation."""
    p = ctx.params
    batches = fixed_batches(load_split_tokens(ctx.input("prepare", CORPUS_FILE), "val"), p.train.eval_batches,
                            p.train.batch_size, p.model.context, seed=p.seed)
    model_cfg, stream_cfg = model_configs(p.model)
    rows = []
    for kind in CHECKED:
        for run, state in run_states(load_tensors(ctx.input(f"train_{kind}_base", WEIGHTS_FILE))).items():
            model = StreamGPT(model_cfg, kind, stream_cfg).to(ctx.device)
            model.load_state_dict(state)
            for layer, c in enumerate(layer_checks(model, batches, p.claims.manifold_tol, ctx.device)):
                rows.append(dict(connection=kind, seed=p.seed + run, layer=layer, max_row_dev=c.max_row_dev,
                                 max_col_dev=c.max_col_dev, min_entry=c.min_entry, passed=c.passed))
    write_table(ctx.output(MANIFOLD_FILE), pa.Table.from_pylist(rows))
    mhc = [r for r in rows if r["connection"] == "mhc"]
    return {f"{k}_failed_layers": float(sum(not r["passed"] for r in rows if r["connection"] == k)) for k in CHECKED} \
        | {"mhc_max_dev": max(max(r["max_row_dev"], r["max_col_dev"]) for r in mhc)}
