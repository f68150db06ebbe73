"""Stage ``train_daif_nig_<task>``: DAIF with the paper's NIG quantile critic on one task for every seed
(vectorised over seeds), then its greedy evaluation; the same outputs as ``train``."""

from __future__ import annotations

import json

from paperdag.io import save_tensors, write_json, write_table
from paperdag.stage import StageContext

from .envs import EnvSpec
from .nig_training import train_nig_agent
from .params import Params
from .prepare import TASKS_FILE
from .train import EPISODES_FILE, EVALUATION_FILE
from .training import Hyper


def train(ctx: StageContext[Params], task: str) -> dict[str, float]:
    """episodes.parquet (seed, episode, end_step, return), evaluation.json (greedy return per seed), weights."""
    p, info = ctx.params, json.loads(ctx.input("prepare", TASKS_FILE).read_text())
    t = info["tasks"][task]
    spec = EnvSpec(task, t["kind"], t["size"], t["obs_dim"], t["n_actions"], t["max_steps"], t["optimal_return"])
    hyper = Hyper(**p.learning.model_dump(), noise_floor=p.bayes.noise_floor)
    scale = (p.tasks.deepsea if t["kind"] == "deepsea" else p.tasks.cartpole).reward_scale
    out = train_nig_agent(spec, hyper, p.bayes.quantiles, p.bayes.lam, p.nig.reg, info["seeds"], t["steps"],
                          p.evaluation.eval_episodes, ctx.device, scale,
                          report=lambda done, total: ctx.report("steps", done, total))
    write_table(ctx.output(EPISODES_FILE), {"seed": out.seed, "episode": out.episode, "end_step": out.end_step,
                                            "return": out.ret})
    write_json(ctx.output(EVALUATION_FILE), {"seeds": info["seeds"], "eval_return": out.eval_return})
    save_tensors(ctx.output("weights.safetensors"), out.weights, metadata={"agent": "daif_nig", "task": task})
    return {"episodes": float(len(out.ret)), "eval_return_mean": sum(out.eval_return) / len(out.eval_return)}
