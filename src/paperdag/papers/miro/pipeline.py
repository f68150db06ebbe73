"""The miro DAG: prepare -> train_<method> for each method (in parallel) -> evaluate. Imported only by the
registry."""

from paperdag.dag import Pipeline, Resources, Stage

from .params import Params

METHODS = ("miro", "base", "filter", "single")  # the method first, then its baselines (methods.py)
TRAIN_PARAMS = ("model", "budget", "methods", "sampler", "rewards", "final")
PLOTS = ("reward_curves.png", "samples.png", "control.png", "final_rewards.png")

PIPELINE = Pipeline(
    slug="miro",
    title="MIRO: training a text-to-image flow generator conditioned on multiple rewards (procedural scenes)",
    params_model=Params,
    headline=("miro_aggregate", "base_aggregate", "speedup_over_base"),
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=("data", "rewards"),
              outputs=("dataset.safetensors", "detector.safetensors", "evaluator.safetensors", "annotations.json",
                       "provenance.json")),
        *(Stage(f"train_{m}", "train", "train:train", upstream=("prepare",), params=TRAIN_PARAMS,
                outputs=("weights.safetensors", "curves.parquet", "finals.parquet"), args={"method_name": m},
                resources=Resources(cpus=1, gpus=0.25)) for m in METHODS),
        Stage("evaluate", "evaluate", "evaluate:evaluate", upstream=("prepare", *(f"train_{m}" for m in METHODS)),
              params=("model", "methods", "sampler", "rewards", "final", "claims", "plans"),
              outputs=("metrics.json", *PLOTS),
              plots=PLOTS, args={"methods": list(METHODS)}, resources=Resources(cpus=1, gpus=0.25)),
    ),
)
