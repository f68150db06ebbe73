"""Cost of compositional verification against the system size N.

The system of N units (followers, subsystems) is the prefix of the largest one verified: its cost is the shared
constants (c_0, Delta, ...) plus the sum over its first N units' branch and bound; it is verified iff they all are.
"Linear in N" is judged by the least-squares slope of log(seconds) against log(N).
"""

from __future__ import annotations

import numpy as np


def prefix_scaling(per_unit: list[dict], constants_seconds: float, n_grid: list[int]) -> dict[str, list]:
    """Seconds, cells and verdict of the prefix of N units, for N in ``n_grid``."""
    return {
        "n": list(n_grid),
        "seconds": [constants_seconds + sum(u["seconds"] for u in per_unit[:n]) for n in n_grid],
        "cells": [sum(u["cells"] for u in per_unit[:n]) for n in n_grid],
        "verified": [all(u["verified"] for u in per_unit[:n]) for n in n_grid],
    }


def loglog_slope(n: list[int], t: list[float]) -> float:
    """Least-squares slope of log t against log N (nan for fewer than two sizes)."""
    return float(np.polyfit(np.log(n), np.log(t), 1)[0]) if len(n) > 1 else float("nan")
