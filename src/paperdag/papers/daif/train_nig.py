"""Stage ``train_daif_nig_<task>``: DAIF with the paper's NIG quantile critic on one task for every seed
(vectorised over seeds), then its greedy evaluation; the same outputs as ``train``. Its evidence-regulariser weight is
the one the ``nig_reg_grid`` stage picked; lambda and sigma_0^2 are per the task's return scale, as the ensemble
agents' (``training.critic_settings``)."""

from __future__ import annotations

import json

from paperdag.stage import StageContext

from .envs import EnvSpec
from .nig_training import train_nig_agent
from .params import Params
from .prepare import TASKS_FILE
from .train import write_outcome
from .training import critic_settings


def train(ctx: StageContext[Params], task: str) -> dict[str, float]:
    """episodes.parquet (seed, episode, end_step, return), evaluation.json (greedy return per seed), weights."""
    return train_on(ctx, task, json.loads(ctx.input("prepare", TASKS_FILE).read_text())["seeds"])


GRID_STAGE, GRID_FILE = "nig_reg_grid", "grid.json"  # the stage that picks the regulariser weight (nig_grid.py)


def reg_of(ctx: StageContext[Params]) -> float:
    """The regulariser weight the grid stage picked."""
    return float(json.loads(ctx.input(GRID_STAGE, GRID_FILE).read_text())["reg"])


def spec_of_task(task: str, t: dict) -> EnvSpec:
    """The EnvSpec of ``task`` from its tasks.json entry ``t``."""
    return EnvSpec(task, t["kind"], t["size"], t["obs_dim"], t["n_actions"], t["max_steps"], t["optimal_return"])


def train_on(ctx: StageContext[Params], task: str, seeds: list[int]) -> dict[str, float]:
    """NIG-DAIF on ``task`` over ``seeds``: trained, evaluated greedily and written as ``train.write_outcome``."""
    p, info = ctx.params, json.loads(ctx.input("prepare", TASKS_FILE).read_text())
    t = info["tasks"][task]
    hyper, lam, scale = critic_settings(p, t["kind"], t["optimal_return"])
    out = train_nig_agent(spec_of_task(task, t), hyper, p.bayes.quantiles, lam, reg_of(ctx), seeds, t["steps"],
                          p.evaluation.eval_episodes, ctx.device, scale,
                          report=lambda done, total: ctx.report("steps", done, total))
    return write_outcome(ctx, out, seeds, "daif_nig", task)
