"""Exact mixed-integer encoding of a ``MaskedNet`` on a box (HiGHS through highspy).

For each ReLU unit with sound pre-activation bounds ``l < 0 < u`` (big-M encoding, Tjeng et al. 2019):
``h >= z, h >= 0, h <= z - l (1 - a), h <= u a, a in {0, 1}`` with ``z = W h_prev + b``; stable units are linear.
The MILP's feasible set projected on (input, output) is exactly the graph of the network on the box, so
``max c^T out`` solved to optimality (HiGHS's dual bound) is the exact maximum.

Deterministic: HiGHS runs on one thread with a fixed random seed, no time limit and a budget of branch-and-bound
nodes (``node_limit``); its dual bound is valid whenever it stops (optimal or node limit), so the result is a
function of the model and the budget alone, never of the machine's speed or load. The banner and log are off.
"""

from __future__ import annotations

from dataclasses import dataclass

import highspy
import numpy as np
from highspy import _core

from .bounds import box_layer_bounds
from .graph import MaskedNet


DETERMINISTIC = {"output_flag": False, "threads": 1, "random_seed": 0, "time_limit": float("inf")}
BUDGET_STATUSES = ("Solution limit reached",)  # HiGHS's status at mip_max_nodes: its dual bound is still valid
TARGET_TOL = 1e-7  # a decision MILP searches objective >= target - TARGET_TOL (HiGHS's feasibility tolerance)


@dataclass(frozen=True)
class MilpResult:
    """``bound``: proven upper bound of the objective; ``value``/``z``: best feasible point found (None if none)."""

    bound: float
    value: float | None
    z: np.ndarray | None
    status: str
    binaries: int
    nodes: int = 0
    lp_iterations: int = 0


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
    node_limit: int = 10_000,
    sense: str = "max",
    target: float | None = None,
) -> MilpResult:
    """Maximise (or minimise) ``objective . out`` over ``z in [lo, up]`` with linear side constraints
    ``l <= a . z <= u`` (input_rows) and ``l <= a . out <= u`` (output_rows). ``pre``: sound per-layer
    pre-activation bounds on this box (from ``bounds.layer_bounds``). ``node_limit``: branch-and-bound nodes
    (deterministic budget); the returned bound is HiGHS's dual bound, valid also when the budget ran out.

    ``target`` (maximisation only): decide ``max <= target`` instead of computing the maximum: the row
    ``objective . out >= target - TARGET_TOL`` restricts the search to violations and HiGHS stops at the first
    solution above ``target``. Infeasible: proved, bound = target - TARGET_TOL; a solution above it: its point
    (``z``, ``value``), bound inf; otherwise the dual bound as usual."""
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
    if target is not None:
        rows.append(({prev[j]: float(c) for j, c in enumerate(objective) if c != 0}, target - TARGET_TOL, inf))

    h = _core._Highs()  # the bare solver: no banner, no Python callbacks
    for option, value in DETERMINISTIC.items():
        h.setOptionValue(option, value)
    h.setOptionValue("mip_max_nodes", int(node_limit))
    if target is not None:
        h.setOptionValue("objective_target", float(target))
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
    nodes, iters = int(max(info.mip_node_count, 0)), int(max(info.simplex_iteration_count, 0))
    if status == "Infeasible":
        bound = -np.inf if target is None else target - TARGET_TOL
        return MilpResult(bound, None, None, status, len(binaries), nodes, iters)
    bound = info.mip_dual_bound if binaries else info.objective_function_value
    if status != "Optimal" and not (binaries and status in BUDGET_STATUSES):
        bound = sign * np.inf
    has_sol = info.primal_solution_status == 2
    z = np.array(h.getSolution().col_value[: len(lo)]) if has_sol else None
    value = info.objective_function_value if has_sol else None
    return MilpResult(float(bound), value, z, status, len(binaries), nodes, iters)


def solve_on_box(net: MaskedNet, lo: np.ndarray, up: np.ndarray, objective: np.ndarray,
                 input_rows: list[tuple[np.ndarray, float, float]] = (),
                 output_rows: list[tuple[np.ndarray, float, float]] = (), node_limit: int = 10_000,
                 sense: str = "max", target: float | None = None) -> MilpResult:
    """``maximize`` with the big-M constants from the box's CROWN layer bounds (``bounds.box_layer_bounds``)."""
    return maximize(net, lo, up, box_layer_bounds(net, lo, up), objective, list(input_rows), list(output_rows),
                    node_limit, sense, target)
