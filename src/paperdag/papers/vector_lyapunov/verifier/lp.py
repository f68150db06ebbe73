"""Exact linear programs over the level sets of a polyhedral norm (HiGHS simplex, deterministic options).

For V(x) = sum_r |K_r x| (a ``lyapunov.Cert`` with no hidden layer: K stacks W diag(1/scale) and
eps diag(1/scale)), V is convex, so {V(x) <= c} = {x : exists t >= K x, t >= -K x, sum t <= c} and

    max l . x  over  lo <= x <= hi,  V_m(M_m x) <= c_m,  A x = b           (``maximize_linear``)
    min V(x)   over  lo <= x <= hi                                          (``minimize_norm``)

are LPs: exact where the MILP encoding of the same sets needs binaries. Results carry a relative margin of
``SAFETY`` (in the sound direction) above the simplex tolerances.
"""

from __future__ import annotations

import highspy
import numpy as np
from highspy import _core

from .milp import DETERMINISTIC

SAFETY = 1e-7


def _solve(c: np.ndarray, col_lo, col_up, rows: list[tuple[np.ndarray, float, float]], sense: str) -> tuple[float, int]:
    h = _core._Highs()
    for option, value in DETERMINISTIC.items():
        h.setOptionValue(option, value)
    n = len(c)
    h.addCols(n, c.astype(np.float64), np.asarray(col_lo, np.float64), np.asarray(col_up, np.float64), 0,
              np.array([], np.int32), np.array([], np.int32), np.array([]))
    starts, idx, val = [], [], []
    for coef, _, _ in rows:
        nz = np.nonzero(coef)[0]
        starts.append(len(idx))
        idx += nz.tolist()
        val += coef[nz].tolist()
    if rows:
        h.addRows(len(rows), np.array([r[1] for r in rows], np.float64), np.array([r[2] for r in rows], np.float64),
                  len(idx), np.array(starts, np.int32), np.array(idx, np.int32), np.array(val, np.float64))
    h.changeObjectiveSense(highspy.ObjSense.kMaximize if sense == "max" else highspy.ObjSense.kMinimize)
    h.run()
    status = h.modelStatusToString(h.getModelStatus())
    if status != "Optimal":
        raise RuntimeError(f"LP not solved to optimality: {status}")
    info = h.getInfo()
    return float(info.objective_function_value), int(info.simplex_iteration_count)


def maximize_linear(l: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                    norms: list[tuple[np.ndarray, np.ndarray, float]],
                    equalities: list[tuple[np.ndarray, float]] = ()) -> tuple[float, int]:
    """(upper bound of max l . x, simplex iterations) over lo <= x <= hi, sum_r |(K M x)_r| <= c for each
    (K, M, c) in ``norms``, a . x = b for each (a, b) in ``equalities``."""
    inf = highspy.kHighsInf
    n = len(l)
    n_t = sum(K.shape[0] for K, _, _ in norms)
    c = np.concatenate([l, np.zeros(n_t)])
    col_lo = np.concatenate([lo, np.zeros(n_t)])
    col_up = np.concatenate([hi, np.full(n_t, inf)])
    rows, off = [], n
    for K, M, cap in norms:
        KM = K @ M
        for r in range(KM.shape[0]):
            for sign in (1.0, -1.0):  # t_r - sign (K M x)_r >= 0
                coef = np.zeros(n + n_t)
                coef[:n] = -sign * KM[r]
                coef[off + r] = 1.0
                rows.append((coef, 0.0, inf))
        coef = np.zeros(n + n_t)
        coef[off:off + KM.shape[0]] = 1.0
        rows.append((coef, -inf, float(cap)))
        off += KM.shape[0]
    for a, b in equalities:
        rows.append((np.concatenate([a, np.zeros(n_t)]), float(b), float(b)))
    value, iters = _solve(c, col_lo, col_up, rows, "max")
    return value + SAFETY * (1.0 + abs(value)), iters


def minimize_norm(K: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[float, int]:
    """(lower bound of min sum_r |(K x)_r|, simplex iterations) over lo <= x <= hi."""
    inf = highspy.kHighsInf
    m, n = K.shape
    c = np.concatenate([np.zeros(n), np.ones(m)])
    rows = []
    for r in range(m):
        for sign in (1.0, -1.0):
            coef = np.zeros(n + m)
            coef[:n] = -sign * K[r]
            coef[n + r] = 1.0
            rows.append((coef, 0.0, inf))
    value, iters = _solve(c, np.concatenate([lo, np.zeros(m)]), np.concatenate([hi, np.full(m, inf)]), rows, "min")
    return value - SAFETY * (1.0 + abs(value)), iters
