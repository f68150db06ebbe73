"""Procedural theorems with a hidden chain of intermediate lemmas.

A theorem has integer-boxed real inputs x_j in [-B, B] and hidden definitions y_i = a_i * b_i + c_i, where a_i is
y_{i-1} (x_0 for i = 0) and b_i an input or an earlier y. Interval arithmetic gives every y_i a box [lo_i, hi_i]:
    [lo, hi] of a * b + c = [min P + c, max P + c],  P = {lo_a lo_b, lo_a hi_b, hi_a lo_b, hi_a hi_b}.
The goal is the box of the last definition y_{k-1}; the hidden lemmas are the boxes of y_0 .. y_{k-2} (k - 1 of them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Box = tuple[int, int]


@dataclass(frozen=True)
class Definition:
    """y = a * b + c over earlier variable names a, b."""

    var: str
    a: str
    b: str
    c: int

    def text(self) -> str:
        return f"{self.var} = {self.a} * {self.b} + {self.c}"


@dataclass(frozen=True)
class Theorem:
    """Inputs with boxes, definitions in order; the goal bounds the last definition."""

    name: str
    inputs: dict[str, Box]
    defs: tuple[Definition, ...]

    @property
    def goal_var(self) -> str:
        return self.defs[-1].var

    @property
    def lemma_vars(self) -> tuple[str, ...]:
        """The variables of the hidden intermediate lemmas (every definition but the last)."""
        return tuple(d.var for d in self.defs[:-1])

    def definition(self, var: str) -> Definition | None:
        return next((d for d in self.defs if d.var == var), None)

    def boxes(self) -> dict[str, Box]:
        """The interval-arithmetic box of every variable (the reference lemmas)."""
        out = dict(self.inputs)
        for d in self.defs:
            (la, ua), (lb, ub) = out[d.a], out[d.b]
            prods = (la * lb, la * ub, ua * lb, ua * ub)
            out[d.var] = (min(prods) + d.c, max(prods) + d.c)
        return out

    def goal(self) -> Box:
        return self.boxes()[self.goal_var]

    def statement(self) -> str:
        """The theorem as the proposer reads it, e.g. ``theorem T (x0 x1 : R) (h0 : -3 <= x0 <= 3) ...
        (d0 : y0 = x0 * x1 + 3) ... : -40 <= y4 <= 52``."""
        inputs = " ".join(f"(h{j} : {lo} <= {x} <= {hi})" for j, (x, (lo, hi)) in enumerate(self.inputs.items()))
        defs = " ".join(f"(d{i} : {d.text()})" for i, d in enumerate(self.defs))
        lo, hi = self.goal()
        return f"theorem {self.name} ({' '.join(self.inputs)} : R) {inputs} {defs} : {lo} <= {self.goal_var} <= {hi}"

    def ancestors(self, var: str) -> set[str]:
        """Every defined variable that ``var``'s definition reaches (its definitional cone, without itself)."""
        seen: set[str] = set()
        stack = [var]
        while stack:
            d = self.definition(stack.pop())
            if d is None:
                continue
            for w in (d.a, d.b):
                if w not in seen and self.definition(w) is not None:
                    seen.add(w)
                    stack.append(w)
        return seen


def sample_theorem(rng: np.random.Generator, name: str, n_lemmas: int, n_inputs: int, input_bound: int,
                   const_bound: int, p_operand_input: float) -> Theorem:
    """k = n_lemmas + 1 definitions y_i = a_i b_i + c_i with a_i = y_{i-1}, b_i an input with probability
    ``p_operand_input`` (else a uniformly drawn earlier y), c_i uniform in [-const_bound, const_bound]."""
    inputs = {f"x{j}": (-input_bound, input_bound) for j in range(n_inputs)}
    defs: list[Definition] = []
    for i in range(n_lemmas + 1):
        a = defs[-1].var if defs else "x0"
        if i < 2 or rng.random() < p_operand_input:
            b = f"x{int(rng.integers(n_inputs))}"
        else:
            b = defs[int(rng.integers(i - 1))].var
        defs.append(Definition(f"y{i}", a, b, int(rng.integers(-const_bound, const_bound + 1))))
    return Theorem(name, inputs, tuple(defs))


def theorem_rows(t: Theorem) -> list[dict[str, object]]:
    """One table row per definition (inputs repeated), the Parquet form of a theorem."""
    return [{"theorem": t.name, "var": d.var, "a": d.a, "b": d.b, "c": d.c,
             "inputs": [f"{k}:{lo}:{hi}" for k, (lo, hi) in t.inputs.items()]} for d in t.defs]


def theorems_from_rows(rows: list[dict[str, object]]) -> list[Theorem]:
    """Inverse of ``theorem_rows`` over a whole table (rows grouped by theorem, in order)."""
    grouped: dict[str, list[dict[str, object]]] = {}
    for r in rows:
        grouped.setdefault(str(r["theorem"]), []).append(r)
    out = []
    for name, rs in grouped.items():
        inputs = {s.split(":")[0]: (int(s.split(":")[1]), int(s.split(":")[2])) for s in rs[0]["inputs"]}
        out.append(Theorem(name, inputs, tuple(Definition(str(r["var"]), str(r["a"]), str(r["b"]), int(r["c"]))
                                               for r in rs)))
    return out
