"""Stage ``prepare``: the task specifications (environment, size, observation width, actions, caps, budget, optimal
and trivial-policy returns) and the environment seeds every agent shares, with their provenance."""

from __future__ import annotations

from dataclasses import asdict
from importlib.metadata import version

from paperdag.io import write_json
from paperdag.stage import StageContext

from .envs import TASKS, deepsea_digest, spec_of, trivial_return
from .params import Params

TASKS_FILE = "tasks.json"


def budget(p: Params, task: str) -> tuple[int, int]:
    """(size, steps per seed) of ``task``: DeepSea runs ``episodes()`` episodes of N steps at its size (N = size for
    ``deepsea``, small_size for ``deepsea_small``); CartPole its step budget (size 0)."""
    sea = p.tasks.deepsea
    if task == "cartpole":
        return 0, p.tasks.cartpole.steps
    size = sea.size if task == "deepsea" else sea.small_size
    return size, size * sea.episodes()


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """tasks.json ({"seeds", "tasks": {name: spec + steps + episodes + trivial-policy returns}}) and provenance."""
    p = ctx.params
    seeds = [1000 * p.seed + i for i in range(p.seeds)]  # paired design: every agent meets the same instances
    tasks = {}
    for name, kind in TASKS.items():
        size, steps = budget(p, name)
        spec = spec_of(name, kind, size, p.tasks.cartpole.max_episode_steps)
        trivial = trivial_return(kind, size, spec.max_steps, p.evaluation.random_episodes, seeds)
        tasks[name] = asdict(spec) | {"steps": steps, "trivial_return": trivial}
    write_json(ctx.output(TASKS_FILE), {"seeds": seeds, "tasks": tasks})
    sea = p.tasks.deepsea
    write_json(ctx.output("provenance.json"), {
        "source": "procedural DeepSea (this package, envs.py) and gymnasium's bundled CartPole-v1 (no download)",
        "deepsea_protocol": f"bsuite deep_sea (sweep.py, analysis.py): sizes {sea.small_size} and {sea.size} of its "
                            f"sweep, {sea.episodes()} episodes each = min({sea.bsuite_episodes}, 2^{sea.size} + "
                            f"{sea.forgiveness}); solved when bad episodes / episodes < {sea.solve_bad_fraction}",
        "gymnasium": version("gymnasium"), "seeds": seeds,
        "deepsea_mappings_sha256": {n: deepsea_digest(tasks[n]["size"], seeds) for n in ("deepsea_small", "deepsea")},
    })
    return {f"trivial_return_{n}": t["trivial_return"]["best"] for n, t in tasks.items()}
