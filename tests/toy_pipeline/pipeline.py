from paperdag.dag import Pipeline, Stage

from .params import Params

PIPELINE = Pipeline(
    slug="toy",
    title="Toy pipeline",
    params_model=Params,
    package="toy_pipeline",
    stages=(
        Stage("prepare", "prepare", "stages:prepare", params=("n", "sleep"), outputs=("data.parquet",)),
        Stage("train_a", "train", "stages:train_a", ("prepare",), ("scale_a", "sleep"), ("model.parquet",)),
        Stage("train_b", "train", "stages:train_b", ("prepare",), ("scale_b", "sleep"), ("model.parquet",)),
        Stage("evaluate", "evaluate", "stages:evaluate", ("train_a", "train_b"), ("sleep",), ("metrics.json",)),
    ),
)
