"""The proposer: a seeded stochastic sketch generator with controlled error rates (a stand-in for the LLM).

It knows the reference lemma boxes (theorems.py) and corrupts them:
    each lemma is skipped with probability p_skip (a skipped or too-coarse step: several skips in a row make one
    step unfold several definitions),
    each emitted lemma is drawn from the base distribution
        D(var):  the reference box with probability 1 - p_wrong, else one of the 2 |T| tightened boxes
                 lo + ceil(f (hi - lo)) or hi - ceil(f (hi - lo)), f in ``tighten`` (each p_wrong / (2 |T|)),
    a sketch carries one unused, tightened lemma with probability p_spurious.
Checker feedback conditions it, the same way for every method that reads it:
    repair: a lemma on a variable with counterexamples x_1..x_m (values of var the checker showed reachable) is drawn
        from D(var) conditioned on its box containing every x_j. The reference box contains every reachable value
        (interval arithmetic is sound, and a counterexample satisfies the definitions and the input boxes), so by
        Bayes P(correct | consistent) = (1 - p) / ((1 - p) + p q) >= 1 - p, q the share of tightened boxes that
        contain the x_j: repair succeeds at least as often as a fresh draw, more when the counterexample excludes a
        wrong box (the information a counterexample carries, and no more);
    below a step flagged too coarse, lemmas are skipped with probability p_skip_after_coarse (<= p_skip).
This measures the sketch/edit framework, not a language model's skill.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from .theorems import Box, Theorem


@dataclass(frozen=True)
class ErrorRates:
    """The proposer's error model (see the module docstring)."""

    p_wrong: float
    p_skip: float
    p_spurious: float
    p_skip_after_coarse: float
    tighten: tuple[float, ...]


@dataclass
class Feedback:
    """What the checker has said so far: counterexample values per variable whose lemma was false, and the
    variables of steps that were too coarse."""

    counterexamples: dict[str, list[Fraction]] = field(default_factory=dict)
    coarse: set[str] = field(default_factory=set)


@dataclass
class Proposer:
    """Draws lemmas and sketches of one theorem from ``rng``."""

    theorem: Theorem
    rates: ErrorRates
    rng: np.random.Generator

    def __post_init__(self) -> None:
        self.reference = self.theorem.boxes()

    def tightened(self, var: str) -> list[Box]:
        """The 2 |T| wrong boxes of ``var``: one side of the reference box moved in by ceil(f * width), f in T."""
        lo, hi = self.reference[var]
        cuts = [max(1, math.ceil(f * (hi - lo))) for f in self.rates.tighten]
        return [(lo + c, hi) for c in cuts] + [(lo, hi - c) for c in cuts]

    def distribution(self, var: str, feedback: Feedback) -> tuple[list[Box], np.ndarray]:
        """D(var) conditioned on containing every counterexample value of ``var``: boxes and probabilities."""
        wrong = self.tightened(var)
        boxes = [self.reference[var], *wrong]
        weights = np.array([1 - self.rates.p_wrong] + [self.rates.p_wrong / len(wrong)] * len(wrong))
        seen = feedback.counterexamples.get(var, [])
        keep = np.array([i == 0 or all(lo <= x <= hi for x in seen) for i, (lo, hi) in enumerate(boxes)])
        weights = np.where(keep, weights, 0.0)
        if weights.sum() <= 0:  # p_wrong = 1 and every wrong box excluded: the reference is all that is left
            weights[0] = 1.0
        return boxes, weights / weights.sum()

    def lemma(self, var: str, feedback: Feedback) -> Box:
        """One draw from D(var) conditioned on the counterexamples seen for ``var``."""
        boxes, p = self.distribution(var, feedback)
        return boxes[int(self.rng.choice(len(boxes), p=p))]

    def lemmas(self, variables: list[str], feedback: Feedback) -> dict[str, Box]:
        """Lemmas for a subset of ``variables``: each kept with probability 1 - p_skip (1 - p_skip_after_coarse
        below a step flagged coarse)."""
        below_coarse = set().union(*(self.theorem.ancestors(v) for v in feedback.coarse)) if feedback.coarse else set()
        out = {}
        for v in variables:
            p_skip = self.rates.p_skip_after_coarse if v in below_coarse else self.rates.p_skip
            if self.rng.random() >= p_skip:
                out[v] = self.lemma(v, feedback)
        return out

    def unused(self) -> list[tuple[str, Box]]:
        """With probability p_spurious, one extra tightened lemma on a random variable that no step needs."""
        if self.rng.random() >= self.rates.p_spurious:
            return []
        var = str(self.rng.choice(list(self.theorem.lemma_vars)))
        wrong = self.tightened(var)
        return [(var, wrong[int(self.rng.integers(len(wrong)))])]
