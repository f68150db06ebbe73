"""Stage ``baselines``: the competence ladder's tuned simple controller (controller.py) on every simulator, per
training seed (torch seed 1000 * root + i, evaluated on the methods' evaluation draws), over as many seeds as the
configurations judged on that simulator run (stress_seeds on the stress simulator, seeds elsewhere); the zero- and
random-action rungs are prepare's."""

from __future__ import annotations

from paperdag.io import write_json
from paperdag.stage import StageContext

from .controller import controller_returns
from .params import ENVS, Params

BASELINES_FILE = "baselines.json"


def baselines(ctx: StageContext[Params]) -> dict[str, float]:
    """baselines.json: {env: {"seeds": [i, ...], "controller": [mean return per seed]}}."""
    p, c, out = ctx.params, ctx.params.controller, {}
    for env in ENVS:
        seeds = list(range(p.stress_seeds if env == p.stress_env else p.seeds))
        out[env] = {"seeds": seeds, "controller": controller_returns(
            env, [1000 * p.seed + i for i in seeds], p.ppo.iterations[env], p.ppo.n_envs, c.directions, c.step,
            c.noise, p.eval_episodes, ctx.device)}
    write_json(ctx.output(BASELINES_FILE), out)
    return {f"controller_return_{env}": sum(v["controller"]) / len(v["controller"]) for env, v in out.items()}
