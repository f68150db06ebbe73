"""Stage ``baselines``: the competence preconditions' ladder (ladder.py) on the tasks where competence is judged,
per environment seed: the uniform random policy and the random-search controller, on the small DeepSea over the NIG
competence stage's seeds (the shared ones first) and on CartPole over the shared seeds; raw returns (evaluate
normalises them like the agents' scores). And the exploration ladder on the hard DeepSea over the shared seeds: the
uniform random policy's mean return and explore-then-commit's training-episode returns (its learning curve), with E
from the reach formula (reach.commit_episodes)."""

from __future__ import annotations

import json

from paperdag.io import write_json
from paperdag.stage import StageContext

from .competence import competence_seeds
from .ladder import explore_then_commit, random_policy, tuned_controller
from .params import Params
from .prepare import TASKS_FILE
from .reach import commit_episodes

BASELINES_FILE = "baselines.json"
RUNGS = {"random": "uniform random policy", "controller": "random-search controller"}  # key -> rung name
EXPLORATION = "exploration"  # baselines.json key of the hard DeepSea's exploration ladder


def baselines(ctx: StageContext[Params]) -> dict[str, float]:
    """baselines.json: {task: {"seeds": [...], "random": [...], "controller": [...]}} (mean returns per seed) and
    {"exploration": {"task", "seeds", "commit_after", "random": [...], "explore_then_commit": [[episode returns]]}}."""
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
    t, shared = info["tasks"]["deepsea"], info["seeds"]
    episodes = t["steps"] // t["max_steps"]
    explore = commit_episodes(t["size"], episodes)
    etc = [explore_then_commit(t["size"], episodes, explore, s) for s in shared]
    write_json(ctx.output(BASELINES_FILE), out | {EXPLORATION: {
        "task": "deepsea", "seeds": shared, "commit_after": explore,
        "random": [random_policy("deepsea", t["size"], t["max_steps"], p.evaluation.random_episodes, s)
                   for s in shared], "explore_then_commit": etc}})
    summary["deepsea_etc_seeds_reaching"] = sum(max(r) > 0.5 for r in etc)
    return summary
