"""The verified domain of follower i, computed soundly.

Query z = (x, delta, x_p, delta_p, w, w_p) in relative errors (model.relative), x^d = x + delta. State box
B = [-S, S] x [-E, E], |w|, |w_p| <= w_bound (w_p: the predecessor's disturbance; the leader's acceleration for
follower 1).
  * full delay domain: x, x^d, x_p, x_p^d in B                          (couplings x + delta in B)
  * reachability-constrained: additionally |delta| <= tau * Delta_i, |delta_p| <= tau * Delta_{i-1},
    Delta_i = max |x_i(k+1) - x_i(k)| over the full domain (exact MILP bounds of the closed-loop step map).
  * the leader has no relative error: for follower 1, x_p = x_p^d = 0 (its speed is any constant; its
    acceleration, |a_0| <= w_bound, enters as w_p).
"""

from __future__ import annotations

import numpy as np

from ..verifier import bab
from ..verifier.milp import solve_on_box
from .certificate import Q_DIM, Policy, VectorCert, compile_increment, compile_query
from .model import Platoon


def query_box(pl: Platoon, i: int, delta: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, tuple]:
    """(lo, hi, couplings) of follower i's query box; ``delta`` [N, 2] per-step bounds, None = full delay domain."""
    S, E = pl.box
    b = np.array([S, E])
    own = pl.tau * delta[i] if delta is not None else 2 * b
    pred = np.zeros(2) if i == 0 else (pl.tau * delta[i - 1] if delta is not None else 2 * b)
    xp = np.zeros(2) if i == 0 else b
    hi = np.concatenate([b, np.minimum(own, 2 * b), xp, np.minimum(pred, 2 * b), [pl.w_bound, pl.w_bound]])
    couplings = tuple((a, a + 2, -b[a % 2], b[a % 2]) for a in (0, 1, 4, 5))
    return -hi, hi, couplings


def reach_bounds(policy: Policy | None, pl: Platoon) -> np.ndarray:
    """Delta [N, 2]: exact bound of |xr_i(k+1) - xr_i(k)| over the full delay domain (4 MILPs per follower).

    Follower i's step depends on its predecessor's bound only through the box, so all followers are independent."""
    out = np.zeros((pl.n, 2))
    for i in range(pl.n):
        net = compile_increment(policy, pl, i)
        lo, hi, couplings = query_box(pl, i, None)
        rows = []
        for a, b, l, u in couplings:
            coef = np.zeros(Q_DIM)
            coef[a] = coef[b] = 1.0
            rows.append((coef, l, u))
        for k in range(2):
            e = np.zeros(net.n_out)
            e[k] = 1.0
            top, bottom = solve_on_box(net, lo, hi, e, rows), solve_on_box(net, lo, hi, e, rows, sense="min")
            out[i, k] = max(top.bound, -bottom.bound)
    return out


def vector_property(vc: VectorCert, policy: Policy | None, pl: Platoon, i: int, delta: np.ndarray | None,
                    c_0: float) -> bab.Property:
    """G_i <= 0 on follower i's delay domain where level_i <= c_0 (stated as the four V's <= c_0, so that a cell
    is discarded as soon as one of them provably exceeds c_0)."""
    lo, hi, couplings = query_box(pl, i, delta)
    regions = tuple((np.eye(6)[k], c_0, "<=") for k in range(2, 6))
    return bab.Property(compile_query(vc, policy, pl, i, c_0), np.eye(6)[0], 0.0, lo, hi, couplings, regions)
