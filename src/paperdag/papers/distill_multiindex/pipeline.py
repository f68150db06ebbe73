"""The distill_multiindex DAG: prepare (tasks) -> reference (full-data networks) -> distill shards (memory search)
and compare (the comparison cell: distilled vs real-data baselines) -> evaluate. Imported only by the registry."""

from paperdag.dag import Pipeline, Resources, Stage

from .params import Params

SHARDS = 4  # the grid's cells are dealt round-robin to this many distillation stages: 4 of ~2.5 min pack with
# compare (~5 min) onto 2 cores better than 2 of ~5 min (three equal stages on two cores take 1.5x one of them)
SETUP = ("data", "network", "grid", "compare")
DISTILL = ("data", "network", "distill", "grid", "claims")

PIPELINE = Pipeline(
    slug="distill_multiindex",
    title="Dataset distillation for two-layer ReLU networks on multi-index models: memory r^2 d + L",
    headline=("reference_error_max", "memory_exponent", "headline_distilled_error", "compression_random_subset"),
    params_model=Params,
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=SETUP, outputs=("tasks.parquet", "provenance.json")),
        Stage("reference", "train", "reference:reference", upstream=("prepare",), params=SETUP,
              outputs=("references.parquet",), resources=Resources(cpus=1, gpus=0.5)),
        *(Stage(f"distill_{i}", "train", "distill_grid:distill_grid", upstream=("reference",), params=DISTILL,
                outputs=("search.parquet", "sets.safetensors"), args={"shard": i, "shards": SHARDS},
                resources=Resources(cpus=1, gpus=0.5)) for i in range(SHARDS)),
        Stage("compare", "train", "compare:compare", upstream=("reference",),
              params=(*DISTILL, "compare"), outputs=("compare.parquet",),
              resources=Resources(cpus=1, gpus=0.5)),
        Stage("evaluate", "evaluate", "evaluate:evaluate",
              upstream=("reference", "compare", *(f"distill_{i}" for i in range(SHARDS))),
              params=("grid", "compare", "claims", "plans"),
              outputs=("metrics.json", "error_vs_memory.png", "memory_scaling.png"),
              plots=("error_vs_memory.png", "memory_scaling.png"), args={"shards": SHARDS}),
    ),
)
