"""The sa_gaussian DAG: prepare -> train_<setting> -> verify_<setting> for each setting -> evaluate.
Imported only by the registry (no torch)."""

from paperdag.dag import Pipeline, Resources, Stage

from .params import Params

SETTINGS = ("sgd_quadratic_gaussian", "sgd_quadratic_skewed", "sgd_logcosh_gaussian", "linear_gaussian",
            "linear_skewed", "linear_markov", "nonlinear_gaussian", "quartic_rademacher")  # = problems.SETTINGS
PLOTS = ("w1_vs_alpha.png", "tails.png", "quartic.png")

PIPELINE = Pipeline(
    slug="sa_gaussian",
    title="Constant-stepsize SA: Gaussian approximation of the steady state, measured against the W1 and tail bounds",
    headline=("slope_sgd_quadratic_gaussian", "slope_sgd_quadratic_skewed", "slope_linear_markov"),
    params_model=Params,
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=("problems",),
              outputs=("settings.json", "provenance.json")),
        *(Stage(f"train_{s}", "train", "train:train", upstream=("prepare",), params=("sim",),
                outputs=("samples.safetensors", "steady.json"), args={"setting": s},
                resources=Resources(cpus=1, gpus=0.1)) for s in SETTINGS),
        *(Stage(f"verify_{s}", "verify", "verify:verify", upstream=("prepare", f"train_{s}"), params=("analysis",),
                outputs=("distances.parquet", "tails.parquet", "checks.parquet"), args={"setting": s})
          for s in SETTINGS),
        Stage("evaluate", "evaluate", "evaluate:evaluate",
              upstream=("prepare", "train_quartic_rademacher", *(f"verify_{s}" for s in SETTINGS)),
              params=("analysis", "claims"), outputs=("metrics.json", "rates.parquet", *PLOTS), plots=PLOTS,
              args={"settings": list(SETTINGS)}),
    ),
)
