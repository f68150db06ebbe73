"""Stage ``baselines``: the competence ladder's scripted controller (scripted.py) and tuned simple controller
(controller.py) on every simulator, per
training seed (torch seed 1000 * root + i, evaluated on the methods' evaluation draws) over ``seeds``, and under the
key "stress" on the stress simulator over the stress runs' fresh seeds (1000 * root + stress_seed_offset + i, i <
stress_seeds; TruDi's stress competence is paired with these); the zero- and random-action rungs are prepare's."""

from __future__ import annotations

import torch

from paperdag.io import write_json
from paperdag.stage import StageContext

from . import scripted
from .controller import controller_returns
from .params import ENVS, Params

BASELINES_FILE = "baselines.json"


def baselines(ctx: StageContext[Params]) -> dict[str, float]:
    """baselines.json: {env or "stress": {"seeds": [i, ...], "controller": [...], "scripted": [...]}}, the mean
    return per seed of the searched linear controller and of the scripted one, on the methods' seed-i evaluation
    starts."""
    p, c, sc, out = ctx.params, ctx.params.controller, ctx.params.scripted, {}
    for key in (*ENVS, "stress"):
        env, offset = (p.stress_env, p.stress_seed_offset) if key == "stress" else (key, 0)
        seeds = list(range(p.stress_seeds if key == "stress" else p.seeds))
        ids = [1000 * p.seed + offset + i for i in seeds]
        evaluation = [torch.Generator(ctx.device).manual_seed(s + 7) for s in ids]
        out[key] = {"seeds": seeds, "controller": controller_returns(
            env, ids, p.ppo.iterations[env], p.ppo.n_envs, c.directions, c.step, c.noise, p.eval_episodes,
            ctx.device), "scripted": scripted.returns(env, p.eval_episodes, evaluation, ctx.device, sc.reacher_gain,
                                                      sc.pendulum_stiffness, sc.detour_waypoint).tolist()}
    write_json(ctx.output(BASELINES_FILE), out)
    return {f"{k}_return_{env}": sum(v[k]) / len(v[k]) for env, v in out.items() for k in ("controller", "scripted")}
