"""Stage ``train_<optimizer>``: every run of one optimizer (runs.py says which), their curves and run records."""

from __future__ import annotations

from paperdag.common.corpus import fixed_batches, load_split_tokens
from paperdag.io import write_json, write_table
from paperdag.stage import StageContext

from .params import Params
from .prepare import CORPUS_FILE
from .runs import Trainer, adamw_runs, curve_table, muon_runs, run_records
from .training import model_config

CURVES_FILE = "curves.parquet"
RUNS_FILE = "runs.json"


def train(ctx: StageContext[Params], optimizer: str) -> dict[str, float]:
    """curves.parquet (``curve_table``) and runs.json (``run_records``); returns the selected runs' lr, mean final
    validation loss and the hidden-matrix optimizer's state bytes."""
    p = ctx.params
    corpus = ctx.input("prepare", CORPUS_FILE)
    tokens = load_split_tokens(corpus, "train")
    val = fixed_batches(load_split_tokens(corpus, "val"), p.train.eval_batches, p.train.batch_size, p.model.context,
                        seed=p.seed)  # the same fixed validation batches for every optimizer
    def log(metric: str, value: float, step: int, run: str, params: dict) -> None:
        ctx.log_metric(metric, value, step, run=run, params=params)
        ctx.report(run, step, p.train.steps)

    trainer = Trainer(model_config(p.model), tokens, val, ctx.device, log)
    if optimizer == "adamw":
        runs, selected = adamw_runs(trainer, p.train, p.adamw, p.seed)
    else:
        runs, selected = muon_runs(trainer, optimizer, p.train, p.muon, p.seed)
    write_table(ctx.output(CURVES_FILE), curve_table(runs, selected))
    records = run_records(runs, selected)
    write_json(ctx.output(RUNS_FILE), records)
    kept = [r for r in records if r["selected"]]
    return {"lr": kept[0]["lr"], "final_val_loss_mean": sum(r["final_val_loss"] for r in kept) / len(kept),
            "hidden_state_bytes": kept[0]["hidden_state_bytes"]}  # fmt: skip
