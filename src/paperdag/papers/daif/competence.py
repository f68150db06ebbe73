"""Stage ``train_daif_nig_deepsea_small``: the NIG agent's competence check on the small DeepSea, over its own seed set,
larger than the paired one (same training and outputs as ``train_nig``).

Why more seeds (params.yaml ``nig_competence_seeds``): the precondition holds when the lower end of the t interval of
the mean greedy score exceeds ``learned_min`` = 0.5. A seed's normalised greedy score on DeepSea N = 6 is two-valued:
~1 when the greedy policy reaches the treasure and ~-0.11 when it does not (a return <= 0 against the best
state-ignoring policy's ~0.093 and the optimum's ~0.992). With solve rate p the mean is -0.11 + 1.11 p, so a true
p = 0.7 (mean 0.667) sits 0.167 above the bar; the exact power of the rule (k ~ Binomial(n, p) solving seeds, the
interval computed from the two-point sample) reaches 0.8 at n = 74 and stays >= 0.8 from n = 82 on, while at the
paired design's 10 seeds it is 0.15. Where the solve rate is 0.55 (mean exactly at the bar) the rule holds with
probability 0.03 at n = 82 (<= 0.05 for every n from 10 to 82): more seeds sharpen the check, they do not loosen it.

The seeds are the shared environment seeds (prepare's 1000 * seed + i, i < seeds) followed by fresh ones of the same
scheme; only this stage runs them. The paired claims read the hard DeepSea and CartPole stages, trained on the shared
seeds alone, so the extra seeds never enter a paired comparison (evaluate checks it).
"""

from __future__ import annotations

import json

from paperdag.stage import StageContext

from .params import Params
from .prepare import TASKS_FILE
from .train_nig import train_on


def competence_seeds(shared: list[int], seed: int, n: int) -> list[int]:
    """The ``shared`` environment seeds (prepare's 1000 * seed + i, i < len(shared)) extended to ``n`` by the same
    scheme."""
    if shared != [1000 * seed + i for i in range(len(shared))] or n < len(shared):
        raise ValueError(f"competence seeds extend prepare's {len(shared)} seeds of root {seed}; got n = {n}")
    return shared + [1000 * seed + i for i in range(len(shared), n)]


def train(ctx: StageContext[Params], task: str) -> dict[str, float]:
    """episodes.parquet (seed, episode, end_step, return), evaluation.json (its seeds and greedy return per seed),
    weights: NIG-DAIF on ``task`` over ``nig_competence_seeds`` seeds."""
    shared = json.loads(ctx.input("prepare", TASKS_FILE).read_text())["seeds"]
    return train_on(ctx, task, competence_seeds(shared, ctx.params.seed, ctx.params.nig_competence_seeds))
