"""The bayesncl DAG: prepare -> train_<method>_<dataset> (3 methods and the supervised upper bound x 2 datasets,
parallel) and gate_<dataset>_<k> (BayesNCL at the gate grid's 3 other points) -> evaluate.

Imported only by the registry.
"""

from paperdag.dag import Pipeline, Resources, Stage

from .params import Params

METHODS = ("simclr", "ncl", "bayesncl")  # the baselines, then the paper's method
DATASETS = ("shapes", "digits")
SUPERVISED = "supervised"  # the supervised upper bound on the same backbone (a precondition's reference)
RUNS = tuple((m, d) for d in DATASETS for m in (*METHODS, SUPERVISED))
GATE_POINTS = 3  # the gate grid's points besides the released one (params sweep.points)
GATES = tuple(f"gate_{d}_{k}" for d in DATASETS for k in range(GATE_POINTS))
PLOTS = ("summary.png", *(f"top_activations_{d}.png" for d in DATASETS))

PIPELINE = Pipeline(
    slug="bayesncl",
    title="BayesNCL: Bayesian gated non-negative contrastive learning vs SimCLR and NCL on compositional scenes",
    headline=("shapes_bayesncl_consistency", "digits_bayesncl_consistency"),
    params_model=Params,
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=("data",), outputs=("data.parquet", "counterfactuals.parquet", "provenance.json")),
        *(Stage(f"train_{m}_{d}", "train", "train:train", upstream=("prepare",), params=("data", "train"),
                outputs=("weights.safetensors",), args={"method": m, "dataset": d},
                resources=Resources(cpus=1, gpus=0.25)) for m, d in RUNS),
        *(Stage(f"gate_{d}_{k}", "train", "train:train", upstream=("prepare",), params=("data", "train", "sweep"),
                outputs=("weights.safetensors",), args={"method": "bayesncl", "dataset": d, "point": k},
                resources=Resources(cpus=1, gpus=0.25)) for d in DATASETS for k in range(GATE_POINTS)),
        Stage("evaluate", "evaluate", "evaluate:evaluate",
              upstream=("prepare", *(f"train_{m}_{d}" for m, d in RUNS), *GATES),
              params=("data", "train", "sweep", "evaluate", "claims", "plans"),
              outputs=("results.parquet", "metrics.json", *PLOTS),
              plots=PLOTS, args={"methods": list(METHODS), "datasets": list(DATASETS)}),
    ),
)
