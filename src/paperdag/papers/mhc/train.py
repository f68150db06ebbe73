"""Stage ``train_<connection>_<cell>``: the seeded runs of one connection in one cell (training.cell_setup), their
curves and final weights."""

from __future__ import annotations

import numpy as np
import torch

from paperdag.common.corpus import fixed_batches, load_split_tokens
from paperdag.io import save_tensors, write_table
from paperdag.stage import StageContext

from .params import Params
from .prepare import CORPUS_FILE
from .records import eval_table, step_table
from .training import cell_setup, train_run

STEPS_FILE = "steps.parquet"
EVALS_FILE = "evals.parquet"
WEIGHTS_FILE = "weights.safetensors"


def run_states(weights: dict[str, torch.Tensor]) -> dict[int, dict[str, torch.Tensor]]:
    """The per-run state dicts of a weights file written by ``train`` (keys ``r<run>.<name>``), by run."""
    out: dict[int, dict[str, torch.Tensor]] = {}
    for key, value in weights.items():
        run, name = key.split(".", 1)
        out.setdefault(int(run[1:]), {})[name] = value
    return dict(sorted(out.items()))


def train(ctx: StageContext[Params], connection: str, cell: str) -> dict[str, float]:
    """steps.parquet and evals.parquet of the runs with seeds seeds.first_seed .. seeds.first_seed + runs - 1 (runs: the
    cell's count, seeds.stress_runs in a stress cell, else seeds.runs), weights.safetensors with each run's state
    under the prefix ``r<run>.``; returns the seed-mean final validation loss and the peak gain."""
    p = ctx.params
    runs = p.seeds.stress_runs if cell.startswith("stress") else p.seeds.runs
    corpus = ctx.input("prepare", CORPUS_FILE)
    tokens = load_split_tokens(corpus, "train")
    model_cfg, stream_cfg, budget = cell_setup(p.model, p.train, p.sweep, cell)
    val = fixed_batches(load_split_tokens(corpus, "val"), p.train.eval_batches, p.train.batch_size, p.model.context,
                        seed=p.seed)  # the same fixed validation batches for every connection, cell and run
    results, state = [], {}
    for run in range(runs):
        seed = p.seeds.first_seed + run
        label = f"{connection} {cell} seed={seed}"

        def log(metric: str, value: float, step: int, label: str = label, seed: int = seed) -> None:
            ctx.log_metric(metric, value, step, run=label, params={"connection": connection, "cell": cell,
                                                                   "seed": seed})
            ctx.report(label, step, budget.steps)

        result = train_run(connection, model_cfg, stream_cfg, budget, seed, tokens, val, ctx.device, log)
        results.append(result)
        state |= {f"r{run}.{k}": v for k, v in result.state.items()}
    write_table(ctx.output(STEPS_FILE), step_table(results))
    write_table(ctx.output(EVALS_FILE), eval_table(results))
    save_tensors(ctx.output(WEIGHTS_FILE), state, metadata={"connection": connection, "cell": cell})
    return {"final_val_loss_mean": float(np.mean([r.val_loss[-1] for r in results])),
            "peak_gain_forward": float(np.nanmax([max(r.gain_forward) for r in results]))}
