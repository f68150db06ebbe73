"""The daif DAG: prepare -> nig_reg_grid (the NIG critic's regulariser weight, picked by the information-gain
precondition) -> train_<agent>_<task> for every agent a task's claims compare (in parallel on Ray) and
baselines (the competence preconditions' ladder: uniform random policy, random-search controller) -> evaluate. The ensemble agents train in ``train`` (agents.py); DAIF with the paper's NIG quantile critic, ``daif_nig``,
in ``train_nig`` (nig.py), with the NIG's own parameters; on the small DeepSea its competence check runs
``nig_competence_seeds`` seeds (``competence``; every paired stage keeps the shared ``seeds``). Imported only by the
registry."""

from paperdag.dag import Pipeline, Resources, Stage

from .params import Params

EXPLORERS = ("daif", "daif_lam0_eps", "daif_lam0_ps", "qrdqn")  # the method, its two exploring ablations, QR-DQN
NIG = "daif_nig"  # DAIF with the paper's critic, the NIG (evidential) quantile head
ENSEMBLE_AGENTS = {"deepsea_small": EXPLORERS, "deepsea": EXPLORERS, "cartpole": ("daif", "qrdqn")}
AGENTS = {t: (*agents, NIG) for t, agents in ENSEMBLE_AGENTS.items()}
COMPETENCE = "deepsea_small"  # the NIG agent trains here on its own, larger seed set (competence.py)
TRAIN = tuple(f"train_{a}_{t}" for t, agents in AGENTS.items() for a in agents)
TRAIN_OUT = ("episodes.parquet", "evaluation.json", "weights.safetensors")

PIPELINE = Pipeline(
    slug="daif",
    title="Distributional active inference: expected-free-energy exploration from a Bayesian quantile critic",
    headline=("deepsea_aulc_daif", "deepsea_aulc_qrdqn", "deepsea_aulc_daif_lam0_ps"),
    params_model=Params,
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=("seed", "seeds", "tasks", "evaluation"),
              outputs=("tasks.json", "provenance.json")),
        *(Stage(f"train_{a}_{t}", "train", "train:train", upstream=("prepare",),
                params=("seeds", "tasks", "learning", "bayes", "evaluation"), outputs=TRAIN_OUT,
                args={"agent": a, "task": t}, resources=Resources(cpus=1, gpus=0.1))
          for t, agents in ENSEMBLE_AGENTS.items() for a in agents),
        Stage("nig_reg_grid", "train", "nig_grid:grid", upstream=("prepare",),
              params=("seed", "tasks", "learning", "bayes", "nig"), outputs=("grid.json",),
              resources=Resources(cpus=1, gpus=0.1)),
        *(Stage(f"train_{NIG}_{t}", "train", "competence:train" if t == COMPETENCE else "train_nig:train",
                upstream=("prepare", "nig_reg_grid"),
                params=("seeds", "tasks", "learning", "bayes", "evaluation", "nig",
                        *(("nig_competence_seeds",) if t == COMPETENCE else ())),
                outputs=TRAIN_OUT, args={"task": t}, resources=Resources(cpus=1, gpus=0.1))
          for t in AGENTS),
        Stage("baselines", "evaluate", "baselines:baselines", upstream=("prepare",),
              params=("seed", "seeds", "nig_competence_seeds", "tasks", "evaluation"), outputs=("baselines.json",)),
        Stage("evaluate", "evaluate", "evaluate:evaluate", upstream=("prepare", "baselines", "nig_reg_grid", *TRAIN),
              params=("tasks", "evaluation", "nig", "claims", "plans"),
              outputs=("curves.parquet", "aulc.parquet", "metrics.json", "learning_curves.png", "aulc.png"),
              plots=("learning_curves.png", "aulc.png"), args={"agents": {t: list(a) for t, a in AGENTS.items()}}),
    ),
)
