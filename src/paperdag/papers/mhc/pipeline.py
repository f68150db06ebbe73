"""The mHC DAG: prepare -> train_<connection>_<run> for residual, HC and mHC and runs 0..2 (in parallel) -> verify
-> evaluate. Run r uses seed + r (weights and batch order), the same for every connection."""

from __future__ import annotations

from paperdag.dag import Pipeline, Resources, Stage

from .params import Params

CONNECTIONS = ("residual", "hc", "mhc")  # the baselines first: one train function, fanned out by args
RUNS = 3  # seeds per connection (a design constant: the fan-out is declared, not read from params)
TRAINS = tuple(f"train_{k}_{r}" for k in CONNECTIONS for r in range(RUNS))
SHARED = ("model", "train")  # the model shape, the budget and the schedule every connection shares
TRAIN_OUT = ("steps.parquet", "evals.parquet", "weights.safetensors")
PLOTS = ("gain.png", "losses.png", "grad_norms.png")

PIPELINE = Pipeline(
    slug="mhc",
    title="mHC: manifold-constrained hyper-connections vs residual and HC on a 16-block byte-level transformer",
    headline=("hc_peak_gain_max", "mhc_peak_gain_max", "mhc_minus_residual_val_loss", "mhc_step_overhead_pct"),
    params_model=Params,
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=("corpus",),
              outputs=("corpus.parquet", "provenance.json")),
        *(Stage(f"train_{k}_{r}", "train", "train:train", upstream=("prepare",), params=SHARED, outputs=TRAIN_OUT,
                args={"connection": k, "run": r}, resources=Resources(cpus=1, gpus=0.1))
          for k in CONNECTIONS for r in range(RUNS)),
        Stage("verify", "verify", "verify:verify", upstream=("prepare", *(t for t in TRAINS if "residual" not in t)),
              params=(*SHARED, "claims"), outputs=("manifold.parquet",), args={"runs": RUNS}),
        Stage("evaluate", "evaluate", "evaluate:evaluate", upstream=("prepare", "verify", *TRAINS),
              params=(*SHARED, "spikes", "bench_steps", "claims"),
              outputs=("metrics.json", "timing.json", "val_loss.json", *PLOTS), plots=PLOTS,
              data_plots={"val_loss.json": {"x": "step", "y": list(CONNECTIONS), "title": "validation loss (mean "
                                            "over seeds)", "y_label": "val_loss"}},
              args={"connections": list(CONNECTIONS), "runs": RUNS}),
    ),
)  # fmt: skip
