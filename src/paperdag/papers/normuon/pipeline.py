"""The NorMuon DAG: prepare -> train_<optimizer> for AdamW, Muon and NorMuon (in parallel) -> evaluate."""

from __future__ import annotations

from paperdag.dag import Pipeline, Resources, Stage

from .params import Params

OPTIMIZERS = ("adamw", "muon", "normuon")  # the baseline first: one train function, fanned out by args
SHARED = ("model", "train", "tuning")  # what every optimizer's runs share: model shape, budget and schedule, lr tuning
TRAIN_OUT = ("curves.parquet", "runs.json")


def _rates(optimizer: str) -> str:
    """The params sub-model holding an optimizer's rates (Muon and NorMuon share ``muon``)."""
    return "adamw" if optimizer == "adamw" else "muon"


PIPELINE = Pipeline(
    slug="normuon",
    title="NorMuon: neuron-wise normalized Muon vs Muon and AdamW on a tiny byte-level transformer",
    headline=("adamw_final_val_loss_mean", "muon_final_val_loss_mean", "normuon_final_val_loss_mean"),
    params_model=Params,
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=("corpus",),
              outputs=("corpus.parquet", "provenance.json")),
        *(Stage(f"train_{o}", "train", "train:train", upstream=("prepare",), params=(*SHARED, _rates(o)),
                outputs=TRAIN_OUT, args={"optimizer": o}, resources=Resources(cpus=1, gpus=0.3)) for o in OPTIMIZERS),
        Stage("evaluate", "evaluate", "evaluate:evaluate", upstream=("prepare", *(f"train_{o}" for o in OPTIMIZERS)),
              params=(*SHARED, "adamw", "muon", "bench_steps", "claims", "plans"),
              outputs=("metrics.json", "timing.json", "curves.png", "val_loss.json"), plots=("curves.png",),
              data_plots={"val_loss.json": {"x": "step", "y": list(OPTIMIZERS), "title": "validation loss (mean over "
                                            "seeds)", "y_label": "val_loss"}},
              args={"optimizers": list(OPTIMIZERS)}),
    ),
)  # fmt: skip
