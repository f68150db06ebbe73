"""Programmatic verification of a task: cycle consistency, property tests and uniqueness.

Cycle consistency of a rule (p, g) with claimed inverse g on a set X of inputs: p(x_i) = y_i on every demo and the
query, and g(p(x)) = x for every x in X. X = the task's demos and query, every grid of a small shape over the full
alphabet (exhaustive: K^4 grids, an exact check on that domain), and ``property_samples`` random grids of the task's
shape drawn from a seed stored with the certificate (so the re-check redoes the same test). If g . p = id on X, p is
injective on X: no information is lost, so the answer p(q) is determined by p.

Uniqueness: every program of the search DSL up to ``max_depth`` that reproduces all demos (the consistent set C) is
run on the query; the task is unique when all of C give one answer (and it is the stored answer). The task's
complexity is its minimal description depth, min_{p in C} |p| (the shortest DSL program that explains the demos).
Cycle consistency does not imply uniqueness: a bijective rule leaves the answer open whenever another program agrees
with it on the demos but not on the query (``rival``).

Baselines of the verifier: ``forward`` checks p(x_i) = y_i on the demos only; ``single`` checks g(p(x_0)) = x_0 on
the first demo only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .arrays import Array, on_device, rows_equal, select, to_numpy
from .primitives import Primitive
from .programs import Level, decode, enumerate_levels, run
from .tasks import Task, sample_inputs

SMALL_SHAPES = {1: (4,), 2: (2, 2), 3: (1, 2, 2)}


@dataclass(frozen=True)
class Certificate:
    """The verdicts of one task (``accepted`` = cycle and unique) and the size of what was checked."""

    forward: bool
    single: bool
    cycle: bool
    checked_inputs: int
    consistent: int
    min_depth: int  # shortest consistent program; -1 when no DSL program reproduces the demos (a lossy rule)
    answers: int
    unique: bool
    accepted: bool


def exhaustive_grids(dim: int, alphabet: int) -> np.ndarray:
    """Every grid of shape SMALL_SHAPES[dim] over the alphabet: K^cells grids, (K^cells, *shape)."""
    shape = SMALL_SHAPES[dim]
    cells = int(np.prod(shape))
    codes = np.arange(alphabet**cells)
    digits = (codes[:, None] // alphabet ** np.arange(cells)) % alphabet
    return digits.reshape(-1, *shape).astype(np.int16)


def property_inputs(seed: int, n: int, shape: Sequence[int], alphabet: int) -> np.ndarray:
    """The ``n`` random grids of the cycle test, cells uniform over the alphabet, drawn from ``seed`` alone."""
    return sample_inputs(np.random.default_rng(seed), n, shape, alphabet, alphabet)


def round_trips(program: Sequence[str], inverse_program: Sequence[str], xs: np.ndarray,
                prims: dict[str, Primitive]) -> bool:
    """g(p(x)) = x for every x in the stack ``xs``."""
    back = run(inverse_program, run(program, xs, prims), prims)
    return back.shape == xs.shape and bool(np.array_equal(back, xs))


def reproduces(program: Sequence[str], xs: np.ndarray, ys: np.ndarray, prims: dict[str, Primitive]) -> bool:
    """p(x_i) = y_i for every pair of the stacks."""
    out = run(program, xs, prims)
    return out.shape == ys.shape and bool(np.array_equal(out, ys))


def consistent_programs(levels: Sequence[Level], demos_out: Array) -> list[tuple[Level, np.ndarray]]:
    """For each shape group, the boolean mask of programs whose outputs on the demos equal ``demos_out``
    (the query is the last example of the enumerated batch)."""
    n = len(demos_out)
    found = []
    for lv in levels:
        if lv.outputs.shape[2:] != demos_out.shape[1:]:
            continue
        found.append((lv, rows_equal(lv.outputs[:, :n], demos_out)))
    return found


def distinct_answers(found: Sequence[tuple[Level, np.ndarray]]) -> list[np.ndarray]:
    """The distinct query outputs p(q) over the consistent programs."""
    answers: dict[tuple[tuple[int, ...], bytes], np.ndarray] = {}
    for lv, ok in found:
        if not ok.any():
            continue
        for a in np.unique(to_numpy(select(lv.outputs, ok)[:, -1]).reshape(int(ok.sum()), -1), axis=0):
            grid = a.reshape(lv.outputs.shape[2:]).astype(np.int16)
            answers[(grid.shape, grid.tobytes())] = grid
    return list(answers.values())


def consistent_set(task: Task, prims: dict[str, Primitive], search: Sequence[str], max_depth: int,
                   device: str) -> list[tuple[Level, np.ndarray]]:
    """The enumeration of every program up to ``max_depth`` on the demos and the query (on ``device``), each shape
    group with its mask of programs consistent with the demos."""
    xs = on_device(np.concatenate([task.demos_in, task.query[None]]), device)
    levels = list(enumerate_levels(xs, search, prims, max_depth))
    return consistent_programs(levels, on_device(task.demos_out, device))


def rival(task: Task, prims: dict[str, Primitive], search: Sequence[str], max_depth: int,
          device: str = "cpu") -> tuple[tuple[str, ...], np.ndarray] | None:
    """The first DSL program (breadth-first order) that reproduces every demo of ``task`` but answers its query
    differently from the stored answer, with that answer; None when every consistent program agrees."""
    best: tuple[int, tuple[str, ...], np.ndarray] | None = None
    for lv, ok in consistent_set(task, prims, search, max_depth, device):
        out = to_numpy(lv.outputs[:, -1])
        differs = ok & ~rows_equal(out, task.answer) if out.shape[1:] == task.answer.shape else ok
        index = np.where(differs, lv.index(len(search)), np.iinfo(np.int64).max)
        i = int(index.argmin())
        if differs[i] and (best is None or index[i] < best[0]):
            best = (int(index[i]), decode(lv.programs[i], search), out[i].astype(np.int16))
    return None if best is None else best[1:]


def count_consistent(task: Task, prims: dict[str, Primitive], search: Sequence[str], max_depth: int,
                     device: str) -> int:
    """|C|: the number of DSL programs up to ``max_depth`` that reproduce every demo of ``task``."""
    return int(sum(ok.sum() for _, ok in consistent_set(task, prims, search, max_depth, device)))


def certify(task: Task, prims: dict[str, Primitive], search: Sequence[str], max_depth: int,
            exhaustive: np.ndarray, random_inputs: np.ndarray, device: str) -> Certificate:
    """Forward, single-sample and full cycle checks, then the uniqueness enumeration over ``search``."""
    p, g = task.program, task.inverse_program
    xs = np.concatenate([task.demos_in, task.query[None]])
    ys_ok = reproduces(p, task.demos_in, task.demos_out, prims) and reproduces(p, task.query, task.answer, prims)
    cycle = ys_ok and all(round_trips(p, g, x, prims) for x in (xs, exhaustive, random_inputs))
    found = consistent_set(task, prims, search, max_depth, device)
    answers = distinct_answers(found)
    unique = len(answers) == 1 and answers[0].shape == task.answer.shape and np.array_equal(answers[0], task.answer)
    depths = [lv.programs.shape[1] for lv, ok in found if ok.any()]
    return Certificate(
        forward=reproduces(p, task.demos_in, task.demos_out, prims),
        single=round_trips(p, g, task.demos_in[:1], prims), cycle=cycle,
        checked_inputs=len(xs) + len(exhaustive) + len(random_inputs),
        consistent=int(sum(ok.sum() for _, ok in found)), min_depth=min(depths, default=-1), answers=len(answers),
        unique=bool(unique), accepted=bool(cycle and unique))
