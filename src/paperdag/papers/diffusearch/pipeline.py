"""The diffusearch DAG: prepare -> train_mdm, train_ar (in parallel) -> decode, baselines and the order study
(orders) -> evaluate. Imported only by the registry."""

from paperdag.dag import Pipeline, Resources, Stage

from .params import Params

KINDS = ("mdm", "ar")  # the masked-diffusion model, then the same-size autoregressive baseline
SHARED = ("data", "model", "train")  # what both models share: programs, shape, budget and seeds

PIPELINE = Pipeline(
    slug="diffusearch",
    title="DiffuSearch: MCTS over plan-and-infill slot orders for a masked diffusion LM vs fixed orders and AR",
    headline=("gain_vs_confidence", "gain_vs_ar", "effect_c", "effect_sims", "order_headroom"),
    params_model=Params,
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=("data",),
              outputs=("programs.parquet", "provenance.json")),
        *(Stage(f"train_{k}", "train", "train:train", upstream=("prepare",), params=SHARED,
                outputs=("models.safetensors", "sanity.json"), args={"kind": k},
                resources=Resources(cpus=1, gpus=0.5)) for k in KINDS),
        Stage("decode", "evaluate", "decode:decode", upstream=("prepare", *(f"train_{k}" for k in KINDS)),
              params=(*SHARED, "search"), outputs=("results.parquet",), resources=Resources(cpus=1, gpus=0.5)),
        Stage("baselines", "evaluate", "baselines:baselines", upstream=("prepare",), params=("data",),
              outputs=("baselines.json",)),
        Stage("orders", "evaluate", "orders:orders", upstream=("prepare", *(f"train_{k}" for k in KINDS)),
              params=(*SHARED, "search", "study"), outputs=("study.parquet",), resources=Resources(cpus=1, gpus=0.5)),
        Stage("evaluate", "evaluate", "evaluate:evaluate",
              upstream=("decode", "baselines", "orders", *(f"train_{k}" for k in KINDS)),
              params=("data", "search", "claims", "plans"), outputs=("metrics.json", "decoders.png", "grid.png", "orders.png"),
              plots=("decoders.png", "grid.png", "orders.png")),
    ),
)
