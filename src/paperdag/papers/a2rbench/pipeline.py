"""The a2rbench DAG: prepare -> train (generate + expand) -> verify -> export -> evaluate. Imported only by the
registry."""

from paperdag.dag import Pipeline, Resources, Stage

from .params import Params

GPU = Resources(cpus=1, gpus=0.5)  # the enumeration runs on a GPU where there is one (arrays.py)
PLOTS = ("verifiers.png", "information.png", "solvers.png")

PIPELINE = Pipeline(
    slug="a2rbench",
    title="A2RBench: generated abstract-reasoning tasks verified by cycle consistency and uniqueness",
    params_model=Params,
    reverify="recheck:reverify",
    headline=("accept_cycle_lossy", "accept_single_lossy", "info_rho_within", "acc_search_P0", "acc_search_P1"),
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=("dsl", "tasks", "solve"),
              outputs=("primitives.parquet", "provenance.json")),
        Stage("train", "train", "train:train", upstream=("prepare",), params=("dsl", "tasks"),
              outputs=("tasks.parquet",)),
        Stage("verify", "verify", "verify:verify", upstream=("train",), params=("dsl", "verify"),
              outputs=("certificates.parquet",), resources=GPU),
        Stage("export", "export", "export:export", upstream=("verify",),
              outputs=("benchmark.parquet", "benchmark.jsonl")),
        Stage("evaluate", "evaluate", "evaluate:evaluate", upstream=("prepare", "verify", "export"),
              params=("dsl", "tasks", "solve", "analysis", "claims", "plans"),
              outputs=("scores.parquet", "ladder.parquet", "llm.json", "metrics.json", *PLOTS), plots=PLOTS,
              resources=GPU),
    ),
)
