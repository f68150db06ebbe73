"""Cost of compositional verification against the system size N.

The system of N units (followers, subsystems) is the prefix of the largest one verified: its cost is the shared
constants plus the sum over its first N units' verification; it is verified iff they all are. Cost is counted in
deterministic work, ``bounds`` = branch-and-bound cells (one CROWN bound each) + MILP nodes (one LP relaxation each),
so "linear in N" is judged by the least-squares slope of log(bounds) against log(N), a function of the cache key;
wall-clock seconds are reported beside it.
"""

from __future__ import annotations

import numpy as np


def prefix_scaling(per_unit: list[dict], seconds: list[float], constants_seconds: float,
                   n_grid: list[int]) -> dict[str, list]:
    """Work (``bounds``, cells, MILP nodes), seconds and verdict of the prefix of N units, for N in ``n_grid``
    (``per_unit`` rows carry the work counts of ``bab.Result.work``, ``seconds`` the units' wall-clock times)."""
    return {
        "n": list(n_grid),
        "bounds": [sum(u["bounds"] for u in per_unit[:n]) for n in n_grid],
        "cells": [sum(u["cells"] for u in per_unit[:n]) for n in n_grid],
        "milp_nodes": [sum(u["milp_nodes"] for u in per_unit[:n]) for n in n_grid],
        "seconds": [constants_seconds + sum(seconds[:n]) for n in n_grid],
        "verified": [all(u["verified"] for u in per_unit[:n]) for n in n_grid],
    }


def loglog_slope(n: list[int], t: list[float]) -> float:
    """Least-squares slope of log t against log N (nan for fewer than two sizes)."""
    return float(np.polyfit(np.log(n), np.log(t), 1)[0]) if len(n) > 1 else float("nan")
