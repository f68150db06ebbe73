"""Stage ``train_daif_nig_<task>``: DAIF with the paper's NIG quantile critic on one task for every seed
(vectorised over seeds), then its greedy evaluation; the same outputs as ``train``."""

from __future__ import annotations

import json

from paperdag.stage import StageContext

from .envs import EnvSpec
from .nig_training import train_nig_agent
from .params import Params
from .prepare import TASKS_FILE
from .train import write_outcome
from .training import Hyper


def train(ctx: StageContext[Params], task: str) -> dict[str, float]:
    """episodes.parquet (seed, episode, end_step, return), evaluation.json (greedy return per seed), weights."""
    return train_on(ctx, task, json.loads(ctx.input("prepare", TASKS_FILE).read_text())["seeds"])


def train_on(ctx: StageContext[Params], task: str, seeds: list[int]) -> dict[str, float]:
    """NIG-DAIF on ``task`` over ``seeds``: trained, evaluated greedily and written as ``train.write_outcome``."""
    p, info = ctx.params, json.loads(ctx.input("prepare", TASKS_FILE).read_text())
    t = info["tasks"][task]
    spec = EnvSpec(task, t["kind"], t["size"], t["obs_dim"], t["n_actions"], t["max_steps"], t["optimal_return"])
    hyper = Hyper(**p.learning.model_dump(), noise_floor=p.bayes.noise_floor)
    scale = (p.tasks.deepsea if t["kind"] == "deepsea" else p.tasks.cartpole).reward_scale
    out = train_nig_agent(spec, hyper, p.bayes.quantiles, p.bayes.lam, p.nig.reg, seeds, t["steps"],
                          p.evaluation.eval_episodes, ctx.device, scale,
                          report=lambda done, total: ctx.report("steps", done, total))
    return write_outcome(ctx, out, seeds, "daif_nig", task)
