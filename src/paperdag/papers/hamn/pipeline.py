"""The hamn DAG: prepare -> embed_<geometry> -> retrieve_<model> -> evaluate. Imported only by the registry."""

from paperdag.dag import Pipeline, Resources, Stage

from .params import Params

DESIGN = ("seeds", "calibration_seed", "trees")
MODELS = {"mhn": "euclidean", "hamn": "poincare"}  # each memory and the geometry of the embedding it stores
PLOTS = ("accuracy_vs_depth.png", "accuracy_by_level.png", "error_lca.png")

PIPELINE = Pipeline(
    slug="hamn",
    title="Hyperbolic associative memory (HAMN) vs Euclidean modern Hopfield retrieval, by hierarchy depth",
    headline=("slope_b2", "error_lca_gap"),
    params_model=Params,
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=("trees",), outputs=("trees.parquet", "provenance.json")),
        *(Stage(f"embed_{g}", "train", "embed:embed", upstream=("prepare",), params=(*DESIGN, "embedding"),
                outputs=("embeddings.parquet", "quality.parquet"), args={"geometry": g}) for g in MODELS.values()),
        *(Stage(f"retrieve_{m}", "train", "retrieve:retrieve", upstream=("prepare", f"embed_{g}"),
                params=(*DESIGN, "embedding", "retrieval", m),
                outputs=("retrievals.parquet", "calibration.parquet", "clean.parquet"),
                args={"model": m}, resources=Resources(cpus=1, gpus=0.5)) for m, g in MODELS.items()),
        Stage("evaluate", "evaluate", "evaluate:evaluate",
              upstream=("retrieve_mhn", "retrieve_hamn", "embed_euclidean", "embed_poincare"),
              params=("trees", "hamn", "claims"), outputs=("cells.parquet", "metrics.json", *PLOTS), plots=PLOTS),
    ),
)
