"""The daif DAG: prepare -> train_<agent>_<task> for every agent and task (in parallel on Ray) -> evaluate.
Imported only by the registry."""

from paperdag.dag import Pipeline, Resources, Stage

from .params import Params

AGENTS = ("daif", "daif_lam0", "qrdqn", "dqn")  # the method, its lambda = 0 ablation, then the baselines
TASKS = ("deepsea", "cartpole")  # the exploration task first, then the dense-reward task
TRAIN = tuple(f"train_{a}_{t}" for a in AGENTS for t in TASKS)
TRAIN_OUT = ("episodes.parquet", "evaluation.json", "weights.safetensors")

PIPELINE = Pipeline(
    slug="daif",
    title="Distributional active inference: expected-free-energy exploration from a Bayesian quantile critic",
    headline=("deepsea_aulc_daif", "deepsea_aulc_qrdqn", "deepsea_aulc_daif_lam0"),
    params_model=Params,
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=("seeds", "tasks", "evaluation"),
              outputs=("tasks.json", "provenance.json")),
        *(Stage(f"train_{a}_{t}", "train", "train:train", upstream=("prepare",),
                params=("seeds", "tasks", "learning", "bayes", "evaluation"), outputs=TRAIN_OUT,
                args={"agent": a, "task": t}, resources=Resources(cpus=1, gpus=0.1))
          for a in AGENTS for t in TASKS),
        Stage("evaluate", "evaluate", "evaluate:evaluate", upstream=("prepare", *TRAIN),
              params=("evaluation", "claims"),
              outputs=("curves.parquet", "aulc.parquet", "metrics.json", "learning_curves.png", "aulc.png"),
              plots=("learning_curves.png", "aulc.png"), args={"agents": list(AGENTS), "tasks": list(TASKS)}),
    ),
)
