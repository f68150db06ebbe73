"""Analysis of the benchmark: information content of a task's inputs against the number of programs consistent
with its demos.

Pooled over tasks, that count mixes two things: the inputs' information and the rule's own redundancy (how many
DSL spellings it has). The information ladder removes the second: each validated rule is re-posed with inputs
over m = 2, ..., K symbols, and both quantities are centred within the rule before ranking.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats

from .certificate import count_consistent
from .primitives import names, registry
from .tasks import Task, make_task


def information_bits(grids: np.ndarray) -> float:
    """Information content of the demo inputs: sum_i |x_i| H(x_i), with H(x) = -sum_v f_v log2 f_v the empirical
    entropy (bits per cell) of the symbol frequencies f of grid x."""
    total = 0.0
    for x in grids:
        f = np.unique(x, return_counts=True)[1] / x.size
        total += x.size * float(-(f * np.log2(f)).sum())
    return total


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rank correlation rho (ties get average ranks); 0 when either side is constant."""
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return 0.0
    return float(stats.spearmanr(x, y).statistic)


def within_rule_rho(bits: np.ndarray, counts: np.ndarray, rule: np.ndarray) -> float:
    """Spearman's rho between bits - mean_rule(bits) and log|C| - mean_rule(log|C|) over all ladder tasks."""
    logc = np.log(np.maximum(counts, 1))
    centred = [v - np.array([v[rule == r].mean() for r in rule]) for v in (bits.astype(float), logc)]
    return spearman(*centred)


def ladder(rng: np.random.Generator, task: Task, levels: Sequence[int], alphabet: int, max_depth: int,
           n_demos: int, device: str) -> list[tuple[int, float, int]]:
    """(m, information_bits, |C|) of ``task``'s rule re-posed with inputs over m symbols, for each m in ``levels``."""
    prims, search = registry(task.dim, alphabet), names(task.dim, alphabet)
    rows = []
    for m in levels:
        t = make_task(rng, task.task_id, task.bench, task.dim, task.program, prims, task.query.shape, alphabet, m,
                      n_demos)
        rows.append((m, information_bits(t.demos_in), count_consistent(t, prims, search, max_depth, device)))
    return rows
