"""The benchmark: theorems that need decomposition under the checker's budget and whose reference sketch checks.

A drawn theorem is kept iff
    the goal alone (every definition unfolded, no lemma) is not proved within ``rlimit``, and
    every reference step (lemma on y_i from the reference lemmas on its operands) is proved within ``rlimit``;
so each kept theorem is provable by a sketch and not without one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .checker import PROVED, check_step
from .theorems import Theorem, sample_theorem


def direct_proof(theorem: Theorem, rlimit: int) -> bool:
    """The trivial baseline: the checker proves the goal with no sketch."""
    return check_step(theorem, theorem.goal_var, theorem.goal(), {}, rlimit).status == PROVED


def reference_checks(theorem: Theorem, rlimit: int) -> bool:
    """Every step of the reference sketch (all lemmas, reference boxes) is proved."""
    boxes = theorem.boxes()
    return all(check_step(theorem, d.var, boxes[d.var],
                          {w: boxes[w] for w in (d.a, d.b) if theorem.definition(w) is not None}, rlimit).status
               == PROVED for d in theorem.defs)


@dataclass
class Level:
    """The theorems kept at one difficulty level and how many draws were rejected for each reason."""

    theorems: list[Theorem]
    direct: int
    reference_failed: int


def draw_level(rng: np.random.Generator, n_lemmas: int, count: int, max_draws: int, rlimit: int, n_inputs: int,
               input_bound: int, const_bound: int, p_operand_input: float) -> Level:
    """Draw theorems with ``n_lemmas`` hidden lemmas until ``count`` are kept (at most ``max_draws`` draws)."""
    level = Level([], 0, 0)
    for draw in range(max_draws):
        if len(level.theorems) == count:
            break
        t = sample_theorem(rng, f"L{n_lemmas}_{draw}", n_lemmas, n_inputs, input_bound, const_bound,
                           p_operand_input)
        if direct_proof(t, rlimit):
            level.direct += 1
        elif not reference_checks(t, rlimit):
            level.reference_failed += 1
        else:
            level.theorems.append(t)
    return level
