"""The influence_newton DAG: prepare -> train -> {verify, retrain} -> evaluate."""

from paperdag.dag import Pipeline, Resources, Stage

from .params import Params

DATA = ("n_grid", "d_grid", "k_grid", "n_subsets", "theta_norm", "n_test", "group_n", "group_d")
SOLVER = ("ridge", "newton_tol", "newton_max_iter")

PIPELINE = Pipeline(
    slug="influence_newton",
    title="Influence functions vs a single Newton step for data attribution (logistic regression, Gaussian features)",
    headline=("ratio_min", "ratio_max", "cells_failed_certificate"),
    params_model=Params,
    stages=(
        Stage("prepare", "prepare", fn="prepare:prepare", params=DATA,
              outputs=("data.parquet", "subsets.parquet", "provenance.json")),
        Stage("train", "train", fn="train:train", upstream=("prepare",), params=("n_grid", "d_grid", *SOLVER),
              outputs=("fits.parquet",)),
        Stage("verify", "verify", fn="verify:verify", upstream=("prepare", "train"),
              params=("ridge", "cert_grad_tol", "cert_min_eig"), outputs=("certificate.parquet",),
              resources=Resources(cpus=1, gpus=0.5)),
        Stage("retrain", "train", fn="retrain:retrain", upstream=("prepare", "train"), params=SOLVER,
              outputs=("estimates.parquet",), resources=Resources(cpus=1, gpus=0.5)),
        Stage("evaluate", "evaluate", fn="evaluate:evaluate", upstream=("prepare", "train", "verify", "retrain"),
              params=("group_n", "group_d", "ridge", "newton_tol", "claims", "plans"),
              outputs=("errors.parquet", "group_effects.parquet", "fits.parquet", "metrics.json", "scaling.png",
                       "ratio_heatmap.png", "group_effects.png"),
              plots=("scaling.png", "ratio_heatmap.png", "group_effects.png")),
    ),
)
