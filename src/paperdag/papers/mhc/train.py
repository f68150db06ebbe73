"""Stage ``train_<connection>_<run>``: one seeded run of one connection, its curves and final weights."""

from __future__ import annotations

from paperdag.common.corpus import fixed_batches, load_split_tokens
from paperdag.io import save_tensors, write_table
from paperdag.stage import StageContext

from .params import Params
from .prepare import CORPUS_FILE
from .records import eval_table, step_table
from .training import model_configs, train_run

STEPS_FILE = "steps.parquet"
EVALS_FILE = "evals.parquet"
WEIGHTS_FILE = "weights.safetensors"


def train(ctx: StageContext[Params], connection: str, run: int) -> dict[str, float]:
    """steps.parquet, evals.parquet and weights.safetensors of the run with seed ``seed + run``; returns its final
    validation loss and peak composite forward gain."""
    p = ctx.params
    corpus = ctx.input("prepare", CORPUS_FILE)
    tokens = load_split_tokens(corpus, "train")
    val = fixed_batches(load_split_tokens(corpus, "val"), p.train.eval_batches, p.train.batch_size, p.model.context,
                        seed=p.seed)  # the same fixed validation batches for every connection and run
    seed, label = p.seed + run, f"{connection} seed={p.seed + run}"

    def log(metric: str, value: float, step: int) -> None:
        ctx.log_metric(metric, value, step, run=label, params={"connection": connection, "seed": seed})
        ctx.report(label, step, p.train.steps)

    result = train_run(connection, *model_configs(p.model), p.train, seed, tokens, val, ctx.device, log)
    write_table(ctx.output(STEPS_FILE), step_table([result]))
    write_table(ctx.output(EVALS_FILE), eval_table([result]))
    save_tensors(ctx.output(WEIGHTS_FILE), result.state, metadata={"connection": connection, "seed": str(seed)})
    return {"final_val_loss": result.val_loss[-1], "peak_gain_forward": max(result.gain_forward)}
