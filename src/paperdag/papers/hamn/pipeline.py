"""The hamn DAG: prepare -> embed_<geometry>, embed_calibration_<geometry> -> retrieve_<model> -> evaluate. Imported only by the registry."""

from paperdag.dag import Pipeline, Resources, Stage

from .params import Params

DESIGN = ("seeds", "calibration_seeds", "trees")
MODELS = {"mhn": "euclidean", "mhn_normed": "euclidean", "mhn_distance": "euclidean", "hamn": "poincare"}
"""Each memory and the geometry of the embedding it stores."""
PLOTS = ("accuracy_vs_depth.png", "tolerance_vs_depth.png", "accuracy_by_level.png", "error_lca.png")

PIPELINE = Pipeline(
    slug="hamn",
    title="Hyperbolic associative memory (HAMN) vs Euclidean modern Hopfield retrieval, by hierarchy depth",
    headline=("tolerance_slope_vs_mhn_distance_b2", "error_lca_gap_vs_mhn_distance"),
    params_model=Params,
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=("trees",), outputs=("trees.parquet", "provenance.json")),
        *(Stage(f"embed_{g}", "train", "embed:embed", upstream=("prepare",), params=(*DESIGN, "embedding"),
                outputs=("embeddings.parquet", "quality.parquet"), args={"geometry": g})
          for g in dict.fromkeys(MODELS.values())),
        *(Stage(f"embed_calibration_{g}", "train", "embed_calibration:embed_calibration", upstream=("prepare",),
                params=(*DESIGN, "embedding"), outputs=("embeddings.parquet", "quality.parquet"), args={"geometry": g})
          for g in dict.fromkeys(MODELS.values())),
        *(Stage(f"retrieve_{m}", "train", "retrieve:retrieve",
                upstream=("prepare", f"embed_{g}", f"embed_calibration_{g}"),
                params=(*DESIGN, "embedding", "retrieval", "hamn" if m == "hamn" else "mhn"),
                outputs=("retrievals.parquet", "calibration.parquet", "clean.parquet", "beta.parquet",
                         "pilot.parquet"),
                args={"model": m}, resources=Resources(cpus=1, gpus=0.5)) for m, g in MODELS.items()),
        Stage("evaluate", "evaluate", "evaluate:evaluate",
              upstream=("prepare", *(f"retrieve_{m}" for m in MODELS), "embed_euclidean", "embed_poincare"),
              params=("seed", "seeds", "trees", "embedding", "retrieval", "hamn", "claims", "plans"),
              outputs=("cells.parquet", "metrics.json", *PLOTS), plots=PLOTS),
    ),
)
