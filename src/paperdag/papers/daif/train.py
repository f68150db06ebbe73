"""Stage ``train_<agent>_<task>``: train one agent on one task for every seed (vectorised over seeds), then
evaluate its greedy policy."""

from __future__ import annotations

import json

from paperdag.io import save_tensors, write_json, write_table
from paperdag.stage import StageContext

from .agents import agent_spec
from .envs import EnvSpec
from .params import Params
from .prepare import TASKS_FILE
from .training import Outcome, critic_settings, train_agent

EPISODES_FILE = "episodes.parquet"
EVALUATION_FILE = "evaluation.json"


def train(ctx: StageContext[Params], agent: str, task: str) -> dict[str, float]:
    """episodes.parquet (seed, episode, end_step, return), evaluation.json (greedy return per seed), weights."""
    p, info = ctx.params, json.loads(ctx.input("prepare", TASKS_FILE).read_text())
    t = info["tasks"][task]
    spec = EnvSpec(task, t["kind"], t["size"], t["obs_dim"], t["n_actions"], t["max_steps"], t["optimal_return"])
    b = p.bayes
    hyper, lam, scale = critic_settings(p, t["kind"], t["optimal_return"])
    spec_a = agent_spec(agent, b.quantiles, b.members, b.prior_scale, lam)
    out = train_agent(spec, spec_a, hyper, info["seeds"], t["steps"], p.evaluation.eval_episodes, ctx.device, scale,
                      report=lambda done, total: ctx.report("steps", done, total))
    return write_outcome(ctx, out, info["seeds"], agent, task)


def write_outcome(ctx: StageContext[Params], out: Outcome, seeds: list[int], agent: str, task: str) -> dict[str, float]:
    """A train stage's outputs: episodes.parquet (seed, episode, end_step, return), evaluation.json (its ``seeds`` and
    greedy return per seed), weights; returns the stage summary."""
    write_table(ctx.output(EPISODES_FILE), {"seed": out.seed, "episode": out.episode, "end_step": out.end_step,
                                            "return": out.ret})
    write_json(ctx.output(EVALUATION_FILE), {"seeds": seeds, "eval_return": out.eval_return, **out.extra})
    save_tensors(ctx.output("weights.safetensors"), out.weights, metadata={"agent": agent, "task": task})
    return {"episodes": float(len(out.ret)), "eval_return_mean": sum(out.eval_return) / len(out.eval_return)}
