"""The sketchrefine DAG: prepare -> prove_<method> for each method -> verify -> evaluate, and prepare ->
grid_<rate>_<low|high> (the four searches at each point of the error-rate grid) -> evaluate. Imported only by the
registry."""

from paperdag.dag import Pipeline, Stage

from .params import Params

METHODS = ("sketchrefine", "hilbert", "immutable", "whole_proof")  # the method, then its baselines
SEARCH = ("theorems", "rlimit", "rates", "seeds", "max_budget")
GRID = ("theorems", "rlimit", "rates", "grid", "max_budget")
POINTS = tuple(f"{r}_{s}" for r in ("p_wrong", "p_skip", "p_spurious") for s in ("low", "high"))  # = grid.POINTS

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
        *(Stage(f"grid_{g}", "train", "grid:grid", upstream=("prepare",), params=GRID, outputs=("runs.parquet",),
                args={"point": g}) for g in POINTS),
        Stage("evaluate", "evaluate", "evaluate:evaluate",
              upstream=("prepare", "verify", *(f"prove_{m}" for m in METHODS), *(f"grid_{g}" for g in POINTS)),
              params=("max_budget", "claims", "grid", "plans"),
              outputs=("metrics.json", "pass_vs_budget.png", "cost.png", "error_grid.png"),
              plots=("pass_vs_budget.png", "cost.png", "error_grid.png"),
              args={"methods": list(METHODS), "points": list(POINTS)}),
    ),
)
