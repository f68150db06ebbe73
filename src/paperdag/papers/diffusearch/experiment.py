"""Every decoder on every test task for one trained (MDM, AR) pair: the per-task rows the claims are computed from.

Decoders: ``ar`` (AR greedy), ``mdm_confidence``, ``pi_l2r``, ``pi_confidence``, ``pi_random`` (plan-and-infill
with fixed orders) and ``mcts_c{c}_n{n}`` (DiffuSearch with exploration constant c and n simulations per commit)
for every (c, n) on the grid. A task is solved when the decoded answer digit equals the executed program's value.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .decoding import (
    Decoded,
    Decoder,
    Predict,
    ar_greedy,
    drive,
    mdm_confidence,
    plan_infill,
)
from .mcts import Conventions, diffusearch
from .task import answer_value

POLICIES = ("l2r", "confidence", "random")


def mcts_name(c: float, n_sim: int) -> str:
    """Decoder label of one grid point."""
    return f"mcts_c{c:g}_n{n_sim}"


def mdm_decoders(x: np.ndarray, answer_start: int, slots: np.ndarray, grid: list[tuple[float, int]],
                 conv: Conventions, rng: np.random.Generator) -> dict[str, Decoder]:
    """The MDM decoders of one task, by label."""
    decs: dict[str, Decoder] = {"mdm_confidence": mdm_confidence(x, answer_start)}
    decs |= {f"pi_{p}": plan_infill(x, answer_start, slots, p, rng) for p in POLICIES}
    decs |= {mcts_name(c, n): diffusearch(x, answer_start, slots, c, n, conv) for c, n in grid}
    return decs


def sequential_fraction(order: list[int]) -> float:
    """Fraction of the free commits (all but the last, which has one open slot and no choice) that took the
    leftmost unfilled slot. A uniformly random order scores (H_S - 1) / (S - 1) in expectation, H_S = sum_j 1/j
    (``random_sequential_expectation``)."""
    left, hits = sorted(order), 0
    for a in order[:-1]:
        hits += a == left[0]
        left.remove(a)
    return hits / (len(order) - 1)


def random_sequential_expectation(slots: int) -> float:
    """E[sequential_fraction] of a uniformly random order of S slots: with j slots open the leftmost is taken with
    probability 1/j, so the free commits (j = S..2) average (H_S - 1) / (S - 1)."""
    return sum(1 / j for j in range(2, slots + 1)) / (slots - 1)


def run_decoders(tokens: np.ndarray, answers: np.ndarray, answer_start: int, slots: np.ndarray,
                 grid: list[tuple[float, int]], conv: Conventions, mdm: Predict, ar: Predict, chunk: int,
                 block: int, rng: np.random.Generator, progress: Callable[[int], None]) -> dict[str, list]:
    """Columns task, decoder, solved, trace_exact, forwards, sequential, order: one row per (task, decoder).
    Tasks run in blocks of ``block`` (all decoders of a block batched together)."""
    k = len(slots) - 1
    cols: dict[str, list] = {"task": [], "decoder": [], "solved": [], "trace_exact": [], "forwards": [],
                             "sequential": [], "order": []}
    for lo in range(0, len(tokens), block):
        ids = range(lo, min(lo + block, len(tokens)))
        per_task = [mdm_decoders(tokens[i], answer_start, slots, grid, conv, rng) for i in ids]
        labels = [(i, name) for i, decs in zip(ids, per_task, strict=True) for name in decs]
        results = drive([d for decs in per_task for d in decs.values()], mdm, chunk)
        ar_results = drive([ar_greedy(tokens[i], answer_start) for i in ids], ar, chunk)
        labels += [(i, "ar") for i in ids]
        for (i, name), out in zip(labels, results + ar_results, strict=True):
            _append(cols, i, name, out, tokens[i], answers[i], answer_start, k)
        progress(ids[-1] + 1)
    return cols


def _append(cols: dict[str, list], i: int, name: str, out: Decoded, truth: np.ndarray, answer: int,
            answer_start: int, k: int) -> None:
    """One row: solved = (decoded answer digit == executed value); trace_exact = whole answer region matches."""
    cols["task"].append(i)
    cols["decoder"].append(name)
    cols["solved"].append(answer_value(out.tokens, answer_start, k) == answer)
    cols["trace_exact"].append(bool(np.array_equal(out.tokens[answer_start:], truth[answer_start:])))
    cols["forwards"].append(out.forwards)
    cols["sequential"].append(sequential_fraction(out.order))
    cols["order"].append(out.order)
