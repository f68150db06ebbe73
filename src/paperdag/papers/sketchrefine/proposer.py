"""The proposer: a seeded stochastic sketch generator with controlled error rates (a stand-in for the LLM).

It knows the reference lemma boxes (theorems.py) and corrupts them:
    each lemma is skipped with probability p_skip (a skipped or too-coarse step: several skips in a row make one
    step unfold several definitions),
    each emitted lemma gets a wrong constant with probability p_wrong (one side tightened by a fraction f of its
    width, f drawn from ``tighten``: lo + ceil(f (hi - lo)) or hi - ceil(f (hi - lo))),
    a sketch carries one unused, tightened lemma with probability p_spurious.
Checker feedback conditions it, the same way for every method: a lemma flagged false is re-emitted correctly with
probability p_fix; below a step flagged coarse, lemmas are skipped with probability p_skip_after_coarse.
This measures the sketch/edit framework, not a language model's skill.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .theorems import Box, Theorem


@dataclass(frozen=True)
class ErrorRates:
    """The proposer's error model (see the module docstring)."""

    p_wrong: float
    p_skip: float
    p_spurious: float
    p_fix: float
    p_skip_after_coarse: float
    tighten: tuple[float, ...]


@dataclass
class Feedback:
    """What the checker has said so far: variables whose lemma was false, and steps that were too coarse."""

    wrong: set[str] = field(default_factory=set)
    coarse: set[str] = field(default_factory=set)


@dataclass
class Proposer:
    """Draws lemmas and sketches of one theorem from ``rng``."""

    theorem: Theorem
    rates: ErrorRates
    rng: np.random.Generator

    def __post_init__(self) -> None:
        self.reference = self.theorem.boxes()

    def lemma(self, var: str, feedback: Feedback) -> Box:
        """The reference box of ``var``, or a tightened one with probability p_wrong (1 - p_fix once flagged)."""
        p_err = 1 - self.rates.p_fix if var in feedback.wrong else self.rates.p_wrong
        return self._tightened(var) if self.rng.random() < p_err else self.reference[var]

    def _tightened(self, var: str) -> Box:
        lo, hi = self.reference[var]
        cut = max(1, math.ceil(float(self.rng.choice(self.rates.tighten)) * (hi - lo)))
        return (lo + cut, hi) if self.rng.random() < 0.5 else (lo, hi - cut)

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
        return [(var, self._tightened(var))]
