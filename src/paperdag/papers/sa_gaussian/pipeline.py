"""The sa_gaussian DAG: prepare -> train_<setting> -> verify_<setting> for each setting, exact_<setting> for the 2-D
ones, prepare -> probe_<setting> for the 2-D i.i.d. ones -> evaluate (which also reads every train stage's final
states). Imported only by the registry (no torch)."""

from paperdag.dag import Pipeline, Resources, Stage

from .params import Params

SETTINGS = ("sgd_quadratic_gaussian", "sgd_quadratic_skewed", "sgd_logcosh_gaussian", "linear_gaussian",
            "linear_skewed", "linear_markov", "nonlinear_gaussian", "quartic_rademacher")  # = problems.SETTINGS
PLANAR = ("linear_gaussian", "linear_skewed", "linear_markov", "nonlinear_gaussian")  # 2-D: exact W1 on subsamples
PROBED = ("linear_gaussian", "linear_skewed", "nonlinear_gaussian")  # i.i.d. 2-D: the bound has content below the sweep
PLOTS = ("w1_vs_alpha.png", "bound.png", "tails.png", "quartic.png")

PIPELINE = Pipeline(
    slug="sa_gaussian",
    title="Constant-stepsize SA: Gaussian approximation of the steady state, measured against the W1 and tail bounds",
    headline=("c_half_sgd_quadratic_skewed", "c_half_linear_markov", "min_bound_slack"),
    params_model=Params,
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=("problems",),
              outputs=("settings.json", "provenance.json")),
        *(Stage(f"train_{s}", "train", "train:train", upstream=("prepare",), params=("sim",),
                outputs=("samples.safetensors", "steady.json"), args={"setting": s},
                resources=Resources(cpus=1, gpus=0.1)) for s in SETTINGS),
        *(Stage(f"verify_{s}", "verify", "verify:verify", upstream=("prepare", f"train_{s}"), params=("analysis",),
                outputs=("distances.parquet", "tails.parquet", "checks.parquet"), args={"setting": s},
                resources=Resources(cpus=1, gpus=0.1)) for s in SETTINGS),  # distances and bootstraps on the device
        *(Stage(f"exact_{s}", "verify", "exact:exact", upstream=("prepare", f"train_{s}"), params=("transport",),
                outputs=("exact.parquet",), args={"setting": s}) for s in PLANAR),
        *(Stage(f"probe_{s}", "verify", "probe:probe", upstream=("prepare",), params=("sim", "transport", "probe"),
                outputs=("probe.json",), args={"setting": s}, resources=Resources(cpus=1, gpus=0.1)) for s in PROBED),
        Stage("evaluate", "evaluate", "evaluate:evaluate",
              upstream=("prepare", *(f"train_{s}" for s in SETTINGS), *(f"verify_{s}" for s in SETTINGS),
                        *(f"exact_{s}" for s in PLANAR), *(f"probe_{s}" for s in PROBED)),
              params=("analysis", "fit", "claims", "plans"), outputs=("metrics.json", "rates.parquet", "bound.parquet",
                                                             *PLOTS), plots=PLOTS,
              args={"settings": list(SETTINGS), "planar": list(PLANAR), "probed": list(PROBED)}),
    ),
)
