"""The mHC DAG: prepare -> train_<connection>_<cell> -> verify -> evaluate. A cell is one training setting, run for
the seeds ``seeds.first_seed ..`` inside its stage (the same seeds, weights' seeds and batch order for every connection):
``base`` (the comparison) and ``narrow`` (the second width, residual and mHC) with ``seeds.runs`` seeds,
``stress0`` / ``stress1`` (the learning-rate stress sweep, every connection) with ``seeds.stress_runs``; and HC
again at 2x and 4x the blocks in one stress cell's setting (``train_hc_depth_x<f>``, depth.py: the depth trend of
its composite gain) with ``depth.runs``.

The seed counts are params (the gpu overlay sets its own) with sample-size plans in params.yaml (``plans``): each
plan's required n comes from a pilot's spread (the runs of seeds ``seeds.pilot``, at the judged sizes, never judged)
and the default judges what its ~12-minute budget affords on 2 cores, fresh seeds, the plan's number reported.
Batching the seeds through torch.func.vmap does not buy more: on CPU these steps are compute-bound (8 seeds vmapped
cost 8x one seed for the residual, 11x for HC)."""

from __future__ import annotations

from paperdag.dag import Pipeline, Resources, Stage

from .params import DEPTH_FACTORS, STRESS_CELLS, Params

CONNECTIONS = ("residual", "hc", "mhc")  # the baselines first: one train function, fanned out by args
SWEEP = ("base", *(f"stress{i}" for i in range(STRESS_CELLS)))  # the learning-rate sweep, every connection
NARROW = ("residual", "mhc")  # the second width: the scale comparison
CELLS = tuple((k, c) for c in SWEEP for k in CONNECTIONS) + tuple((k, "narrow") for k in NARROW)
TRAINS = tuple(f"train_{k}_{c}" for k, c in CELLS)
DEPTHS = tuple(f"train_hc_depth_x{f}" for f in DEPTH_FACTORS)  # HC at 2x and 4x the blocks: the depth trend
SHARED = ("model", "train", "sweep", "seeds")  # the shapes, budgets, schedules and seeds every connection shares
TRAIN_OUT = ("steps.parquet", "evals.parquet", "weights.safetensors")
PLOTS = ("gain.png", "losses.png", "grad_norms.png")

PIPELINE = Pipeline(
    slug="mhc",
    title="mHC: manifold-constrained hyper-connections vs residual and HC on a byte-level transformer, with a "
          "learning-rate stress sweep and a second width",
    headline=("hc_peak_gain_max", "mhc_peak_gain_max", "mhc_minus_residual_val_loss", "mhc_flop_overhead_pct"),
    params_model=Params,
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=("corpus",),
              outputs=("corpus.parquet", "provenance.json")),
        *(Stage(f"train_{k}_{c}", "train", "train:train", upstream=("prepare",), params=SHARED,
                outputs=TRAIN_OUT,
                args={"connection": k, "cell": c},
                resources=Resources(cpus=1, gpus=0.1))
          for k, c in CELLS),
        *(Stage(f"train_hc_depth_x{f}", "train", "depth:train_depth", upstream=("prepare",),
                params=(*SHARED, "depth"), outputs=("steps.parquet", "evals.parquet"), args={"factor": f},
                resources=Resources(cpus=1, gpus=0.1))
          for f in DEPTH_FACTORS),
        Stage("verify", "verify", "verify:verify", upstream=("prepare", "train_hc_base", "train_mhc_base"),
              params=(*SHARED, "claims"), outputs=("manifold.parquet",)),
        Stage("evaluate", "evaluate", "evaluate:evaluate", upstream=("prepare", "verify", *TRAINS, *DEPTHS),
              params=(*SHARED, "depth", "bench_steps", "flop_widths", "claims", "plans"),
              outputs=("metrics.json", "timing.json", "val_loss.json", *PLOTS), plots=PLOTS,
              data_plots={"val_loss.json": {"x": "step", "y": list(CONNECTIONS), "title": "validation loss, base "
                                            "cell (mean over seeds)", "y_label": "val_loss"}},
              args={"cells": [list(kc) for kc in CELLS], "depths": list(DEPTH_FACTORS)}),
    ),
)  # fmt: skip
