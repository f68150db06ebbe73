"""The dune DAG: prepare -> train_surrogate -> perturb_<scheme> (parallel) -> victims_<scheme> (parallel),
standard_draws (the standard schemes' replicates), trivial_baselines (the competence ladder), verify (budgets) ->
evaluate. Imported only by the registry."""

from paperdag.dag import Pipeline, Resources, Stage

from .params import Params

SCHEMES = ("clean", "random", "synthetic", "ops", "em", "adv_poison", "spatial", "colour", "dune")  # + ablations
PERTURBED = SCHEMES[1:]
ENSEMBLE = ("spatial", "colour", "adv_poison")  # the schemes that read the surrogate run
GPU = Resources(cpus=1, gpus=0.5)


def _perturb_upstream(scheme: str) -> tuple[str, ...]:
    if scheme == "dune":
        return ("prepare", "perturb_spatial", "perturb_colour")
    return ("prepare", "train_surrogate") if scheme in ENSEMBLE else ("prepare",)


PIPELINE = Pipeline(
    slug="dune",
    title="DUNE: dual-branch (spatial + colour) unlearnable examples vs UE baselines under defenses",
    headline=("acc_clean_mean", "acc_dune_mean", "acc_dune_none"),
    params_model=Params,
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=("data",),
              outputs=("data.safetensors", "provenance.json")),
        Stage("train_surrogate", "train", "surrogate:train_surrogate", upstream=("prepare",),
              params=("net", "surrogate"), outputs=("ensemble.safetensors", "sanity.json"), resources=GPU),
        *(Stage(f"perturb_{s}", "train", "perturb:perturb", upstream=_perturb_upstream(s),
                params=("net", "budget", "dune", "baselines"), outputs=("perturbed.safetensors",),
                args={"scheme": s}, resources=GPU) for s in PERTURBED),
        *(Stage(f"victims_{s}", "train", "retrain:retrain",
                upstream=("prepare",) if s == "clean" else ("prepare", f"perturb_{s}"),
                params=("net", "defenses", "seeds"), outputs=("victims.parquet",), args={"scheme": s},
                resources=GPU) for s in SCHEMES),
        Stage("standard_draws", "train", "draws:standard_draws", upstream=("prepare",),
              params=("net", "budget", "baselines", "draws"), outputs=("draws.parquet",), resources=GPU),
        Stage("trivial_baselines", "train", "baseline_ladder:trivial_baselines", upstream=("prepare",),
              params=("trivial",), outputs=("ladder.parquet", "ladder.json")),
        Stage("verify", "verify", "verify:verify", upstream=("prepare", *(f"perturb_{s}" for s in PERTURBED)),
              params=("budget",), outputs=("budget.parquet",), args={"schemes": list(PERTURBED)}),
        Stage("evaluate", "evaluate", "evaluate:evaluate",
              upstream=("prepare", "train_surrogate", "standard_draws", "trivial_baselines", "verify",
                        *(f"perturb_{s}" for s in PERTURBED), *(f"victims_{s}" for s in SCHEMES)),
              params=("net", "budget", "dune", "defenses", "claims", "plans"),
              outputs=("metrics.json", "accuracy.parquet", "accuracy_table.png", "examples.png"),
              plots=("accuracy_table.png", "examples.png"), args={"schemes": list(SCHEMES)}),
    ),
)
