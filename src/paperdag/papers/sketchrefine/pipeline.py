"""The sketchrefine DAG: prepare -> prove_<method> for each method -> verify -> evaluate. Imported only by the
registry."""

from paperdag.dag import Pipeline, Stage

from .params import Params

METHODS = ("sketchrefine", "hilbert", "immutable", "whole_proof")  # the method, then its baselines
SEARCH = ("theorems", "rlimit", "rates", "seeds", "max_budget")

PIPELINE = Pipeline(
    slug="sketchrefine",
    title="EditableSketch / SketchRefine: editable proof sketches refined by local edits, checked by z3",
    headline=("pass_rate_sketchrefine", "pass_rate_immutable", "pass_rate_hilbert", "tokens_per_solved_sketchrefine"),
    params_model=Params,
    reverify="reverify:reverify",
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=("theorems", "rlimit"),
              outputs=("theorems.parquet", "provenance.json")),
        *(Stage(f"prove_{m}", "train", "prove:prove", upstream=("prepare",), params=SEARCH,
                outputs=("runs.parquet", "proofs.parquet"), args={"method": m}) for m in METHODS),
        Stage("verify", "verify", "verify:verify", upstream=("prepare", *(f"prove_{m}" for m in METHODS)),
              params=("rlimit",), outputs=("verified.parquet", "theorems.parquet", "proofs.parquet", "certificate.json"),
              args={"methods": list(METHODS)}),
        Stage("evaluate", "evaluate", "evaluate:evaluate",
              upstream=("prepare", "verify", *(f"prove_{m}" for m in METHODS)),
              params=("max_budget", "claims", "plans"), outputs=("metrics.json", "pass_vs_budget.png", "cost.png"),
              plots=("pass_vs_budget.png", "cost.png"), args={"methods": list(METHODS)}),
    ),
)
