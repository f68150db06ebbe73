"""Stage ``prepare``: the task specifications (observation width, actions, caps, optimal and trivial-policy
returns) and
the environment seeds every agent shares, with their provenance."""

from __future__ import annotations

from dataclasses import asdict
from importlib.metadata import version

from paperdag.io import write_json
from paperdag.stage import StageContext

from .envs import ENV_NAMES, deepsea_digest, spec_of, trivial_return
from .params import Params

TASKS_FILE = "tasks.json"


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """tasks.json ({"seeds", "tasks": {name: spec + steps + trivial-policy returns}}) and provenance.json."""
    p = ctx.params
    seeds = [1000 * p.seed + i for i in range(p.seeds)]  # paired design: every agent meets the same instances
    size, tasks = p.tasks.deepsea_size, {}
    for name in ENV_NAMES:
        budget = getattr(p.tasks, name)
        spec = spec_of(name, size, budget.max_episode_steps)
        trivial = trivial_return(name, size, spec.max_steps, p.evaluation.random_episodes, seeds)
        tasks[name] = asdict(spec) | {"steps": budget.steps, "trivial_return": trivial}
    write_json(ctx.output(TASKS_FILE), {"seeds": seeds, "deepsea_size": size, "tasks": tasks})
    write_json(ctx.output("provenance.json"), {
        "source": "procedural DeepSea (this package, envs.py) and gymnasium's bundled CartPole-v1 (no download)",
        "gymnasium": version("gymnasium"), "seeds": seeds,
        "deepsea_mappings_sha256": deepsea_digest(size, seeds),
    })
    return {f"trivial_return_{n}": t["trivial_return"]["best"] for n, t in tasks.items()}
