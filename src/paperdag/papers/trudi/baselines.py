"""Stage ``baselines``: the competence ladder's scripted controller (scripted.py) and tuned simple controller
(controller.py) on every simulator, per
training seed (torch seed 1000 * root + i, evaluated on the methods' evaluation draws), over as many seeds as the
configurations judged on that simulator run (stress_seeds on the stress simulator, seeds elsewhere); the zero- and
random-action rungs are prepare's."""

from __future__ import annotations

import torch

from paperdag.io import write_json
from paperdag.stage import StageContext

from . import scripted
from .controller import controller_returns
from .params import ENVS, Params

BASELINES_FILE = "baselines.json"


def baselines(ctx: StageContext[Params]) -> dict[str, float]:
    """baselines.json: {env: {"seeds": [i, ...], "controller": [...], "scripted": [...]}}, the mean return per seed
    of the searched linear controller and of the scripted one, on the methods' seed-i evaluation starts."""
    p, c, sc, out = ctx.params, ctx.params.controller, ctx.params.scripted, {}
    for env in ENVS:
        seeds = list(range(p.stress_seeds if env == p.stress_env else p.seeds))
        ids = [1000 * p.seed + i for i in seeds]
        evaluation = [torch.Generator(ctx.device).manual_seed(s + 7) for s in ids]
        out[env] = {"seeds": seeds, "controller": controller_returns(
            env, ids, p.ppo.iterations[env], p.ppo.n_envs, c.directions, c.step, c.noise, p.eval_episodes,
            ctx.device), "scripted": scripted.returns(env, p.eval_episodes, evaluation, ctx.device, sc.reacher_gain,
                                                      sc.pendulum_stiffness, sc.detour_waypoint).tolist()}
    write_json(ctx.output(BASELINES_FILE), out)
    return {f"{k}_return_{env}": sum(v[k]) / len(v[k]) for env, v in out.items() for k in ("controller", "scripted")}
