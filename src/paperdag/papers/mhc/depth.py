"""Stage ``train_hc_depth_x<f>``: HC trained again at ``f`` times the model's blocks (the depth trend of its composite
mixing gain, the mechanism behind its instability: the product of n_layer * 2 unconstrained H_res maps), in the
setting of the sweep cell ``depth.cell`` (its peak lr and steps), for the first ``depth.runs`` judged seeds (the same
seeds, initialisation seeds and batch order as that cell's runs, so the trend pairs by seed)."""

from __future__ import annotations

from dataclasses import replace

from paperdag.common.corpus import fixed_batches, load_split_tokens
from paperdag.io import write_table
from paperdag.stage import StageContext

from .params import Params
from .prepare import CORPUS_FILE
from .records import eval_table, step_table
from .training import cell_setup, train_run

STEPS_FILE = "steps.parquet"
EVALS_FILE = "evals.parquet"


def train_depth(ctx: StageContext[Params], factor: int) -> dict[str, float]:
    """steps.parquet and evals.parquet of HC at ``factor`` x model.n_layer blocks, seeds seeds.first_seed ..
    + depth.runs - 1; returns the peak forward gain."""
    p = ctx.params
    corpus = ctx.input("prepare", CORPUS_FILE)
    tokens = load_split_tokens(corpus, "train")
    model_cfg, stream_cfg, budget = cell_setup(p.model, p.train, p.sweep, p.depth.cell)
    model_cfg = replace(model_cfg, n_layer=factor * p.model.n_layer)
    val = fixed_batches(load_split_tokens(corpus, "val"), p.train.eval_batches, p.train.batch_size, p.model.context,
                        seed=p.seed)  # the validation batches of every other cell
    results = []
    for run in range(p.depth.runs):
        seed = p.seeds.first_seed + run
        label = f"hc {model_cfg.n_layer} blocks seed={seed}"

        def log(metric: str, value: float, step: int, label: str = label, seed: int = seed) -> None:
            ctx.log_metric(metric, value, step, run=label, params={"connection": "hc", "blocks": model_cfg.n_layer,
                                                                   "seed": seed})
            ctx.report(label, step, budget.steps)

        results.append(train_run("hc", model_cfg, stream_cfg, budget, seed, tokens, val, ctx.device, log))
    write_table(ctx.output(STEPS_FILE), step_table(results))
    write_table(ctx.output(EVALS_FILE), eval_table(results))
    return {"peak_gain_forward": float(max(max(r.gain_forward) for r in results))}
