"""The trudi DAG: prepare -> train_* (method x simulator x setting, fanned out; TruDi's main runs after Gaussian
PPO's on the same simulator, whose per-update KL sets its epsilon; on the stability simulator DPPO as published, the
final-step trust region and the ``clip`` ablation at the base and the large learning rate) and baselines (the
competence ladder's random-search controller) -> evaluate."""

from paperdag.dag import Pipeline, Resources, Stage

from .params import ENVS, Params

TRAIN_PARAMS = ("seeds", "stress_seeds", "stress_seed_offset", "lr", "epsilon", "policy", "ppo", "stress_env", "stress_lr", "sweep_env",
                "sweep_epsilons", "eval_episodes")
TRAIN_OUT = ("curves.parquet", "evals.parquet", "actions.parquet", "weights.safetensors")
GPU = Resources(cpus=1, gpus=0.25)
RUNS = {  # stage name -> train args
    **{f"train_{env}_{m}": {"method": m, "setting": "main", "env": env} for env in ENVS for m in ("trudi", "gauss")},
    **{f"{setting}_{m}": {"method": m, "setting": setting}
       for setting in ("base", "stress") for m in ("dppo", "clip", "final")},  # clip: the labelled ablation
    "stress_trudi": {"method": "trudi", "setting": "stress"},
    "sweep_trudi": {"method": "trudi", "setting": "sweep"},
}
MATCHED_TO = {f"train_{env}_trudi": (f"train_{env}_gauss",) for env in ENVS}  # TruDi's epsilon = Gaussian's KL
PLOTS = ("returns.png", "kl_per_update.png", "detour_actions.png", "epsilon_sweep.png")

PIPELINE = Pipeline(
    slug="trudi",
    title="TruDi: trust-region diffusion policies for on-policy RL in batched simulators",
    headline=("detour_coverage_trudi", "detour_coverage_gauss", "stress_max_kl_dppo", "stress_max_kl_trudi"),
    params_model=Params,
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=("eval_episodes", "throughput_envs"),
              outputs=("specs.json", "throughput.parquet")),
        *(Stage(name, "train", "train:train", upstream=("prepare", *MATCHED_TO.get(name, ())), params=TRAIN_PARAMS,
                outputs=TRAIN_OUT, args=args, resources=GPU) for name, args in RUNS.items()),
        Stage("baselines", "evaluate", "baselines:baselines",
              params=("seeds", "stress_seeds", "stress_seed_offset", "stress_env", "ppo", "controller", "scripted", "eval_episodes"),
              outputs=("baselines.json",)),
        Stage("evaluate", "evaluate", "evaluate:evaluate", upstream=("prepare", "baselines", *RUNS),
              params=("lr", "stress_env", "stress_lr", "sweep_env", "claims", "plans"),
              outputs=("metrics.json", "evals.parquet", *PLOTS), plots=PLOTS, args={"runs": list(RUNS)}),
    ),
)
