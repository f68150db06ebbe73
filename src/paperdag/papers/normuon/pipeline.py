"""The NorMuon DAG: prepare -> {train_adamw, train_muon, train_normuon} (in parallel) -> evaluate."""

from __future__ import annotations

from paperdag.dag import Pipeline, Resources, Stage
from paperdag.papers.normuon.params import Params

CORPUS_PARAMS = ("corpus_packages", "corpus_max_bytes", "val_fraction")
TRAIN_PARAMS = (
    "d_model", "n_layer", "n_head", "context", "batch_size", "steps", "warmup_steps", "final_lr_frac",
    "eval_every", "eval_batches", "n_seeds",
)  # fmt: skip
ADAMW_PARAMS = (*TRAIN_PARAMS, "adamw_lrs", "adamw_weight_decay")
MUON_PARAMS = (*TRAIN_PARAMS, "muon_lr", "muon_aux_lr", "muon_weight_decay", "normuon_beta2")
TRAIN_OUTPUTS = ("curves.parquet", "runs.json")


def _train_stage(name: str, params: tuple[str, ...]) -> Stage:
    return Stage(f"train_{name}", "train", fn=f"stages:train_{name}", upstream=("prepare",), params=params,
                 outputs=TRAIN_OUTPUTS, resources=Resources(cpus=1, gpus=0.3))  # fmt: skip


PIPELINE = Pipeline(
    slug="normuon",
    title="NorMuon: neuron-wise normalized Muon vs Muon and AdamW on a tiny byte-level transformer",
    params_model=Params,
    stages=(
        Stage("prepare", "prepare", fn="stages:prepare", params=CORPUS_PARAMS,
              outputs=("corpus.parquet", "provenance.json")),
        _train_stage("adamw", ADAMW_PARAMS),
        _train_stage("muon", MUON_PARAMS),
        _train_stage("normuon", MUON_PARAMS),
        Stage("evaluate", "evaluate", fn="evaluate:evaluate",
              upstream=("prepare", "train_adamw", "train_muon", "train_normuon"),
              params=tuple(dict.fromkeys((*ADAMW_PARAMS, *MUON_PARAMS, "bench_steps"))),
              outputs=("metrics.json", "timing.json", "curves.png"), plots=("curves.png",)),
    ),
)  # fmt: skip
