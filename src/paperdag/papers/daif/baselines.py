"""Stage ``baselines``: the competence preconditions' ladder (ladder.py) on the tasks where competence is judged,
per environment seed: the uniform random policy and the random-search controller, on the small DeepSea over the NIG
competence stage's seeds (the shared ones first) and on CartPole over the shared seeds; raw returns (evaluate
normalises them like the agents' scores)."""

from __future__ import annotations

import json

from paperdag.io import write_json
from paperdag.stage import StageContext

from .competence import competence_seeds
from .ladder import random_policy, tuned_controller
from .params import Params
from .prepare import TASKS_FILE

BASELINES_FILE = "baselines.json"
RUNGS = {"random": "uniform random policy", "controller": "random-search controller"}  # key -> rung name


def baselines(ctx: StageContext[Params]) -> dict[str, float]:
    """baselines.json: {task: {"seeds": [...], "random": [...], "controller": [...]}} (mean returns per seed)."""
    p, info = ctx.params, json.loads(ctx.input("prepare", TASKS_FILE).read_text())
    seeds = {"deepsea_small": competence_seeds(info["seeds"], p.seed, p.nig_competence_seeds),
             "cartpole": info["seeds"]}
    out, summary = {}, {}
    for task, own in seeds.items():
        t = info["tasks"][task]
        out[task] = {"seeds": own,
                     "random": [random_policy(t["kind"], t["size"], t["max_steps"], p.evaluation.random_episodes, s)
                                for s in own],
                     "controller": [tuned_controller(t["kind"], t["size"], t["max_steps"], t["steps"],
                                                     p.evaluation.eval_episodes, s) for s in own]}
        summary |= {f"{task}_{k}": sum(out[task][k]) / len(own) for k in RUNGS}
    write_json(ctx.output(BASELINES_FILE), out)
    return summary
