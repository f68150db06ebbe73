"""Stage ``train_<optimizer>``: every run of one optimizer (runs.py says which: the pilot's lr grid on the tuning
slice, then the judged seeds at the chosen lr), their curves and run records."""

from __future__ import annotations

from paperdag.common.corpus import fixed_batches, load_split_tokens
from paperdag.io import write_json, write_table
from paperdag.stage import StageContext

from .params import Params
from .prepare import CORPUS_FILE
from .runs import Trainer, curve_table, optimizer_runs, run_records, tuning_split
from .training import adamw_config, model_config, muon_config

CURVES_FILE = "curves.parquet"
RUNS_FILE = "runs.json"


def train(ctx: StageContext[Params], optimizer: str) -> dict[str, float]:
    """curves.parquet (``curve_table``) and runs.json (``run_records``); returns the chosen lr, the judged runs' mean
    final validation loss, the pilot's run count and the hidden-matrix optimizer's state bytes."""
    p = ctx.params
    corpus = ctx.input("prepare", CORPUS_FILE)
    tokens = load_split_tokens(corpus, "train")
    val = fixed_batches(load_split_tokens(corpus, "val"), p.train.eval_batches, p.train.batch_size, p.model.context,
                        seed=p.seed)  # the same fixed validation batches for every optimizer
    def log(metric: str, value: float, step: int, run: str, params: dict) -> None:
        ctx.log_metric(metric, value, step, run=run, params=params)
        ctx.report(run, step, p.train.steps)

    fit, tune = tuning_split(corpus, p.tuning.fraction)
    tune_windows = fixed_batches(tune, p.train.eval_batches, p.train.batch_size, p.model.context,
                                 seed=p.tuning.pilot_seed)  # the pilot's score: windows of the tuning slice only
    model = model_config(p.model)
    pilot = Trainer(model, fit, tune_windows, ctx.device, log, "pilot")
    judged = Trainer(model, tokens, val, ctx.device, log, "judged")
    if optimizer == "adamw":
        centre, config = p.adamw.lr, lambda lr, seed: adamw_config(p.train, p.adamw, lr, seed)
    else:
        centre, config = p.muon.lr, lambda lr, seed: muon_config(p.train, p.muon, optimizer, lr, seed)
    runs, selected = optimizer_runs(pilot, judged, config, centre, p.tuning, p.train, p.seed)
    write_table(ctx.output(CURVES_FILE), curve_table(runs, selected))
    records = run_records(runs, selected)
    write_json(ctx.output(RUNS_FILE), records)
    kept = [r for r in records if r["selected"]]
    return {"lr": kept[0]["lr"], "final_val_loss_mean": sum(r["final_val_loss"] for r in kept) / len(kept),
            "pilot_runs": len(records) - len(kept), "hidden_state_bytes": kept[0]["hidden_state_bytes"]}  # fmt: skip
