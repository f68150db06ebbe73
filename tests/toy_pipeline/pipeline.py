from paperdag.dag import Pipeline, Stage

from .params import Params

PIPELINE = Pipeline(
    slug="toy",
    title="Toy pipeline",
    params_model=Params,
    package="toy_pipeline",
    stages=(
        Stage("prepare", "prepare", "stages:prepare", params=("n", "sleep"), outputs=("data.parquet",)),
        *(Stage(f"train_{v}", "train", "stages:train", ("prepare",), (f"scale_{v}", "sleep"), ("model.parquet",),
                args={"variant": v}) for v in ("a", "b")),
        Stage("evaluate", "evaluate", "stages:evaluate", ("train_a", "train_b"), ("sleep",), ("metrics.json", "n.png"),
              plots=("n.png",)),
    ),
)
