"""Exact mixed-integer encoding of a ``MaskedNet`` on a box (HiGHS through highspy).

For each ReLU unit with sound pre-activation bounds ``l < 0 < u`` (big-M encoding, Tjeng et al. 2019):
``h >= z, h >= 0, h <= z - l (1 - a), h <= u a, a in {0, 1}`` with ``z = W h_prev + b``; stable units are linear.
The MILP's feasible set projected on (input, output) is exactly the graph of the network on the box, so
``max c^T out`` solved to optimality (HiGHS's dual bound) is the exact maximum.
"""

from __future__ import annotations

from dataclasses import dataclass

import highspy
import numpy as np

from .bounds import box_layer_bounds
from .graph import MaskedNet


@dataclass(frozen=True)
class MilpResult:
    """``bound``: proven upper bound of the objective; ``value``/``z``: best feasible point found (None if none)."""

    bound: float
    value: float | None
    z: np.ndarray | None
    status: str
    binaries: int


def mirrored_pairs(w: np.ndarray, b: np.ndarray, units) -> list[tuple[int, int]]:
    """Pairs (i, j) of the given units computing relu(t) and relu(-t) of the same t (|t| = relu(t) + relu(-t)):
    for t > 0 only i can be active, for t < 0 only j, and t = 0 is representable with either, so a_i + a_j = 1 is a
    valid cut that halves the branching on absolute values."""
    def key(row: np.ndarray, bias: float) -> tuple[bytes, float]:
        return (row + 0.0).tobytes(), bias + 0.0  # + 0.0 maps -0.0 to 0.0, so a row and its negation compare equal

    seen = {}
    for i in units:
        seen.setdefault(key(w[i], float(b[i])), i)
    pairs = []
    for i in units:
        j = seen.get(key(-w[i], -float(b[i])))
        if j is not None and i < j:
            pairs.append((i, j))
    return pairs


def maximize(
    net: MaskedNet,
    lo: np.ndarray,
    up: np.ndarray,
    pre: list[tuple[np.ndarray, np.ndarray]],
    objective: np.ndarray,
    input_rows: list[tuple[np.ndarray, float, float]] = (),
    output_rows: list[tuple[np.ndarray, float, float]] = (),
    time_limit: float = 30.0,
    sense: str = "max",
) -> MilpResult:
    """Maximise (or minimise) ``objective . out`` over ``z in [lo, up]`` with linear side constraints
    ``l <= a . z <= u`` (input_rows) and ``l <= a . out <= u`` (output_rows). ``pre``: sound per-layer
    pre-activation bounds on this box (from ``bounds.layer_bounds``)."""
    inf = highspy.kHighsInf
    col_lo, col_up = list(map(float, lo)), list(map(float, up))
    rows: list[tuple[dict[int, float], float, float]] = []
    binaries: list[int] = []
    prev = list(range(len(lo)))
    for (w, b, m), (pl, pu) in zip(zip(net.weights, net.biases, net.relu), pre):
        cur, binary_of = [], {}
        for i in range(w.shape[0]):
            h = len(col_lo)
            cur.append(h)
            lin = {prev[j]: -float(w[i, j]) for j in np.nonzero(w[i])[0]}
            if not m[i]:
                col_lo.append(float(pl[i])), col_up.append(float(pu[i]))
                rows.append(({h: 1.0, **lin}, float(b[i]), float(b[i])))
            elif pu[i] <= 0:
                col_lo.append(0.0), col_up.append(0.0)
            elif pl[i] >= 0:
                col_lo.append(float(pl[i])), col_up.append(float(pu[i]))
                rows.append(({h: 1.0, **lin}, float(b[i]), float(b[i])))
            else:
                a = h + 1
                col_lo += [0.0, 0.0]
                col_up += [float(pu[i]), 1.0]
                binaries.append(a)
                binary_of[i] = a
                rows.append(({h: 1.0, **lin}, float(b[i]), inf))  # h >= z
                rows.append(({h: 1.0, **lin, a: -float(pl[i])}, -inf, float(b[i] - pl[i])))  # h <= z - l(1-a)
                rows.append(({h: 1.0, a: -float(pu[i])}, -inf, 0.0))  # h <= u a
        for i, j in mirrored_pairs(w, b, binary_of):  # relu(t) and relu(-t): exactly one is active
            rows.append(({binary_of[i]: 1.0, binary_of[j]: 1.0}, 1.0, 1.0))
        prev = cur
    for coef, rl, ru in input_rows:
        rows.append(({j: float(c) for j, c in enumerate(coef) if c != 0}, rl, ru))
    for coef, rl, ru in output_rows:
        rows.append(({prev[j]: float(c) for j, c in enumerate(coef) if c != 0}, rl, ru))

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("threads", 1)
    n = len(col_lo)
    cost = np.zeros(n)
    cost[prev] = objective
    h.addCols(n, cost, np.array(col_lo), np.array(col_up), 0, np.array([], np.int32), np.array([], np.int32),
              np.array([]))
    starts, idx, val = [], [], []
    for coef, _, _ in rows:
        starts.append(len(idx))
        idx += list(coef.keys())
        val += list(coef.values())
    h.addRows(len(rows), np.array([r[1] for r in rows]), np.array([r[2] for r in rows]), len(idx),
              np.array(starts, np.int32), np.array(idx, np.int32), np.array(val, np.float64))
    if binaries:
        h.changeColsIntegrality(len(binaries), np.array(binaries, np.int32),
                                np.array([highspy.HighsVarType.kInteger] * len(binaries)))
    sign = 1.0 if sense == "max" else -1.0
    h.changeObjectiveSense(highspy.ObjSense.kMaximize if sense == "max" else highspy.ObjSense.kMinimize)
    h.run()
    status = h.modelStatusToString(h.getModelStatus())
    info = h.getInfo()
    if status == "Infeasible":
        return MilpResult(-sign * np.inf, None, None, status, len(binaries))
    bound = info.mip_dual_bound if binaries else info.objective_function_value
    if status != "Optimal" and not (binaries and status == "Time limit reached"):
        bound = sign * np.inf
    has_sol = info.primal_solution_status == 2
    z = np.array(h.getSolution().col_value[: len(lo)]) if has_sol else None
    value = info.objective_function_value if has_sol else None
    return MilpResult(float(bound), value, z, status, len(binaries))


def solve_on_box(net: MaskedNet, lo: np.ndarray, up: np.ndarray, objective: np.ndarray,
                 input_rows: list[tuple[np.ndarray, float, float]] = (),
                 output_rows: list[tuple[np.ndarray, float, float]] = (), time_limit: float = 30.0,
                 sense: str = "max") -> MilpResult:
    """``maximize`` with the big-M constants from the box's CROWN layer bounds (``bounds.box_layer_bounds``)."""
    return maximize(net, lo, up, box_layer_bounds(net, lo, up), objective, list(input_rows), list(output_rows),
                    time_limit, sense)
