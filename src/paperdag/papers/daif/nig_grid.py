"""Stage ``nig_reg_grid``: the NIG critic's evidence-regulariser weight, picked from a declared grid by the information-
gain precondition alone (never by an evidence verdict).

For each weight of ``nig.reg_grid`` the NIG agent trains on the small DeepSea (the competence task, its full budget)
over ``nig.grid_seeds`` seeds of its own, disjoint from every seed a judged claim uses (1000 * seed + GRID_OFFSET + i).
Per seed it records the ratio of the trained critic's epistemic variance at the (s, a) it never took over those it
took (nig_training.variance_ratio). The pick is the weight whose mean log ratio has the highest lower 95% t bound
(ties: the first in the grid): the weight under which the critic most surely keeps its uncertainty where it has no
data. The judged precondition is then measured again, on the NIG agent's own competence seeds (claims.py).
"""

from __future__ import annotations

import json

import numpy as np

from paperdag.common.stats import mean_ci
from paperdag.io import write_json
from paperdag.stage import StageContext

from .nig_training import train_nig_agent
from .params import Params
from .prepare import TASKS_FILE
from .train_nig import GRID_FILE, spec_of_task
from .training import critic_settings

GRID_OFFSET = 500  # grid seeds 1000 * seed + 500 + i: disjoint from the shared and the competence seeds (< 500)


def grid_seeds(seed: int, n: int) -> list[int]:
    """The grid's own environment seeds."""
    return [1000 * seed + GRID_OFFSET + i for i in range(n)]


def pick(ratios: dict[float, list[float]]) -> tuple[float, dict[float, dict]]:
    """The weight whose mean log variance ratio has the highest lower 95% t bound (ties: the first), and each
    weight's interval of the mean log ratio."""
    rows = {reg: mean_ci(np.log(np.asarray(r)), unit="seed") for reg, r in ratios.items()}
    best = max(rows, key=lambda reg: (rows[reg].lo, -list(rows).index(reg)))
    return best, {reg: ci.rounded() for reg, ci in rows.items()}


def grid(ctx: StageContext[Params]) -> dict[str, float]:
    """grid.json: {"seeds", "ratios": {reg: [per seed]}, "log_ratio": {reg: interval}, "reg": the pick}."""
    p, info = ctx.params, json.loads(ctx.input("prepare", TASKS_FILE).read_text())
    task = "deepsea_small"
    t, seeds = info["tasks"][task], grid_seeds(p.seed, p.nig.grid_seeds)
    hyper, lam, scale = critic_settings(p, t["kind"], t["optimal_return"])
    ratios = {}
    for i, reg in enumerate(p.nig.reg_grid):
        out = train_nig_agent(spec_of_task(task, t), hyper, p.bayes.quantiles, lam, reg,
                              seeds, t["steps"], 1, ctx.device, scale,
                              report=lambda done, total, i=i: ctx.report("steps", i * total + done,
                                                                         len(p.nig.reg_grid) * total))
        ratios[reg] = out.extra["variance_ratio"]
    best, rows = pick(ratios)
    write_json(ctx.output(GRID_FILE), {"seeds": seeds, "ratios": {str(k): v for k, v in ratios.items()},
                                       "log_ratio": {str(k): v for k, v in rows.items()}, "reg": best})
    return {"reg": best}
