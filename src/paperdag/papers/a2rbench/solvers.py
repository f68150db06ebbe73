"""Solvers scored on the benchmark, all under one budget of B programs examined (a deterministic cost unit).

- ``search``: breadth-first enumerative program search over the full DSL (structural + symbolic primitives); the
  answer is p*(q) for the first program p* (smallest breadth-first index < B) with p*(x_i) = y_i on every demo.
- ``search_relabel``: the same search over structural primitives only, where a program matches when some alphabet
  bijection s makes s(p(x_i)) = y_i cellwise on every demo (s is read off the demos; it must also be defined on
  every symbol of p(q)); the answer is s(p*(q)). It does not rely on what the symbols are.
- ``relabel``: the heuristic s(q) (``search_relabel`` restricted to the empty program).
- ``identity``: the trivial baseline, answer = q.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .arrays import on_device, to_numpy
from .certificate import consistent_programs
from .primitives import Primitive
from .programs import enumerate_levels
from .tasks import Task

SOLVERS = ("search", "search_relabel", "relabel", "identity")


def relabelings(outputs: np.ndarray, targets: np.ndarray, alphabet: int) -> tuple[np.ndarray, np.ndarray]:
    """For each row n of ``outputs`` (N, *T) against ``targets`` (*T): whether a bijection s with s(out) = target
    cellwise exists (each source symbol meets one target symbol and vice versa), and its table (N, K), -1 where
    undefined."""
    n = len(outputs)
    a = outputs.reshape(n, -1).astype(np.int64)
    b = np.broadcast_to(targets.reshape(1, -1), a.shape).astype(np.int64)
    flat = (np.arange(n)[:, None] * alphabet + a) * alphabet + b
    seen = np.bincount(flat.ravel(), minlength=n * alphabet * alphabet).reshape(n, alphabet, alphabet) > 0
    ok = (seen.sum(axis=2) <= 1).all(axis=1) & (seen.sum(axis=1) <= 1).all(axis=1)
    table = np.where(seen.any(axis=2), seen.argmax(axis=2), -1)
    return ok, table


def solve(task: Task, solver: str, prims: dict[str, Primitive], full: Sequence[str], structural: Sequence[str],
          max_depth: int, budget: int, alphabet: int, device: str) -> tuple[np.ndarray | None, int]:
    """(answer or None, programs examined) of ``solver`` on ``task``; the enumeration runs on ``device``."""
    if solver == "identity":
        return task.query, 1
    names = full if solver == "search" else structural
    depth = 0 if solver == "relabel" else max_depth
    xs = on_device(np.concatenate([task.demos_in, task.query[None]]), device)
    levels = list(enumerate_levels(xs, names, prims, depth))
    best: tuple[int, np.ndarray] | None = None
    if solver == "search":
        for lv, ok in consistent_programs(levels, on_device(task.demos_out, device)):
            idx = np.where(ok, lv.index(len(names)), np.iinfo(np.int64).max)
            i = int(idx.argmin())
            if ok[i] and idx[i] < budget and (best is None or idx[i] < best[0]):
                best = (int(idx[i]), to_numpy(lv.outputs[i, -1]))
    else:
        n = len(task.demos_out)
        for lv in levels:
            if lv.outputs.shape[2:] != task.demos_out.shape[1:]:
                continue
            outputs = to_numpy(lv.outputs)
            ok, table = relabelings(outputs[:, :n], task.demos_out, alphabet)
            q = outputs[:, -1].reshape(len(outputs), -1).astype(np.int64)
            covered = (np.take_along_axis(table, q, axis=1) >= 0).all(axis=1)
            idx = np.where(ok & covered, lv.index(len(names)), np.iinfo(np.int64).max)
            i = int(idx.argmin())
            if ok[i] and covered[i] and idx[i] < budget and (best is None or idx[i] < best[0]):
                best = (int(idx[i]), table[i][outputs[i, -1]].astype(np.int16))
    if best is None:
        total = sum(len(lv.programs) for lv in levels)
        return None, min(total, budget)
    return best[1], best[0] + 1


def correct(answer: np.ndarray | None, task: Task) -> bool:
    """Exact match of the grid (shape and every cell)."""
    return answer is not None and answer.shape == task.answer.shape and bool(np.array_equal(answer, task.answer))
