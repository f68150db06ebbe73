"""Programs: compositions p = (f_1, ..., f_d) applied left to right, p(x) = f_d(...f_1(x)), their claimed inverses
p^-1 = (f_d^-1, ..., f_1^-1), and the breadth-first enumeration of every program up to a depth.

Enumeration is vectorised: level d is the stack of all P^d outputs, grouped by output shape (a transpose changes
it), computed from level d - 1 with one call per (primitive, shape group). The breadth-first index of a program
with primitive indices (i_1, ..., i_d) is sum_{j<d} P^j + sum_k i_k P^(d - k): the order a budgeted search visits
programs in (shallower first, then lexicographic).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from .arrays import Array, concat
from .primitives import Primitive


def run(program: Sequence[str], x: np.ndarray, prims: dict[str, Primitive]) -> np.ndarray:
    """p(x) = f_d(...f_1(x)) on the trailing grid axes of ``x``."""
    for name in program:
        x = prims[name].fn(x)
    return x


def inverse(program: Sequence[str], prims: dict[str, Primitive]) -> list[str]:
    """The claimed inverse (f_d^-1, ..., f_1^-1); a lossy step's claimed inverse is the identity (it is dropped)."""
    return [prims[n].inverse for n in reversed(program) if prims[n].inverse is not None]


@dataclass(frozen=True)
class Level:
    """All programs of one depth whose outputs share a shape: primitive indices (N, d) (numpy) and outputs
    (N, *batch) (numpy, or torch on the GPU path)."""

    programs: np.ndarray
    outputs: Array

    def index(self, n_prims: int) -> np.ndarray:
        """Breadth-first index of each program: sum_{j<d} P^j + sum_k i_k P^(d-k)."""
        d = self.programs.shape[1]
        offset = sum(n_prims**j for j in range(d))
        return offset + self.programs @ (n_prims ** np.arange(d - 1, -1, -1, dtype=np.int64))


def enumerate_levels(batch: Array, names: Sequence[str], prims: dict[str, Primitive],
                     max_depth: int) -> Iterator[Level]:
    """Every program of depth 0..max_depth over ``names`` applied to ``batch`` (examples x grid), as shape groups."""
    groups = [Level(np.zeros((1, 0), dtype=np.int64), batch[None])]
    yield from groups
    for _ in range(max_depth):
        by_shape: dict[tuple[int, ...], list[Level]] = {}
        for g in groups:
            for j, name in enumerate(names):
                out = prims[name].fn(g.outputs)
                progs = np.concatenate([g.programs, np.full((len(g.programs), 1), j)], axis=1)
                by_shape.setdefault(out.shape[1:], []).append(Level(progs, out))
        groups = [Level(np.concatenate([lv.programs for lv in lvs]), concat([lv.outputs for lv in lvs]))
                  for lvs in by_shape.values()]
        yield from groups


def decode(row: np.ndarray, names: Sequence[str]) -> tuple[str, ...]:
    """Primitive indices -> names."""
    return tuple(names[int(i)] for i in row)
