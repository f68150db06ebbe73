"""The proof checker: z3 (nonlinear real arithmetic) under a deterministic resource budget.

One proof step proves a box lo <= v <= hi from the input boxes, the cited lemma boxes and the definitions of every
variable between v and its cited premises (the definitions are unfolded up to the cut made by the citations):
    inputs and cited boxes and unfolded definitions and (v < lo or v > hi)  is unsat  =>  the step is proved.
z3's ``rlimit`` (a deterministic count of solver work, not time) caps each step, so a step that skips too many
definitions runs out of budget ("coarse") while single steps fit; "sat" gives a counterexample ("false"), whose
value of v (outside the claimed box, inside every true bound on v) is what a repair can be conditioned on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import z3

from .theorems import Box, Theorem

PROVED, FALSE, COARSE = "proved", "false", "coarse"


@dataclass(frozen=True)
class Verdict:
    """The checker's answer for one step, with its error message (a counterexample or the budget) if not proved and,
    for a counterexample, its value of the step's variable."""

    status: str
    error: str = ""
    value: Fraction | None = None


def _real(x: z3.ExprRef) -> Fraction:
    """A z3 model value as a fraction (a rational exactly, an algebraic number to within 1e-20; bounds outgrow a
    float's 16 digits on long chains)."""
    return (x if z3.is_rational_value(x) else x.approx(20)).as_fraction()


def unfolded(theorem: Theorem, var: str, cited: set[str]) -> list[str]:
    """The variables whose definitions a step on ``var`` may unfold: ``var`` and its ancestors reached without
    passing through a cited variable."""
    out, stack = [], [var]
    while stack:
        w = stack.pop()
        d = theorem.definition(w)
        if d is None or w in out or (w != var and w in cited):
            continue
        out.append(w)
        stack += [d.a, d.b]
    return out


def check_step(theorem: Theorem, var: str, box: Box, cited: dict[str, Box], rlimit: int) -> Verdict:
    """Decide one step in a fresh z3 context (so the resource count, hence the verdict, is reproducible)."""
    ctx = z3.Context()
    names: dict[str, z3.ArithRef] = {}

    def v(name: str) -> z3.ArithRef:
        if name not in names:
            names[name] = z3.Real(name, ctx)
        return names[name]

    s = z3.Solver(ctx=ctx)
    s.set("rlimit", rlimit)
    for w in unfolded(theorem, var, set(cited)):
        d = theorem.definition(w)
        s.add(v(w) == v(d.a) * v(d.b) + d.c)
    for w, (lo, hi) in theorem.inputs.items():
        if w in names:
            s.add(v(w) >= lo, v(w) <= hi)
    for w, (lo, hi) in cited.items():
        s.add(v(w) >= lo, v(w) <= hi)
    s.add(z3.Or(v(var) < box[0], v(var) > box[1]))
    result = s.check()
    if result == z3.unsat:
        return Verdict(PROVED)
    if result == z3.sat:
        m = s.model()
        shown = ", ".join(f"{w}={m.eval(names[w], model_completion=True)}" for w in sorted(names))
        return Verdict(FALSE, f"counterexample: {shown}", _real(m.eval(names[var], model_completion=True)))
    return Verdict(COARSE, f"resource limit {rlimit} exceeded: step too coarse, decompose it")


@dataclass
class Checker:
    """``check_step`` with a memo (the verdict is a pure function of the step) and counters of logical calls."""

    rlimit: int
    calls: int = 0
    memo: dict[tuple, Verdict] = field(default_factory=dict)

    def __call__(self, theorem: Theorem, var: str, box: Box, cited: dict[str, Box]) -> Verdict:
        self.calls += 1
        key = (theorem.name, var, box, tuple(sorted(cited.items())))
        if key not in self.memo:
            self.memo[key] = check_step(theorem, var, box, cited, self.rlimit)
        return self.memo[key]
