"""The verified domain of follower i and the constants of the sISS argument, all computed soundly.

Query z = (x, delta, x_p, delta_p, w), x^d = x + delta. State box B = [-S, S] x [-E, E], |w| <= w_bound.
  * full delay domain: x, x^d, x_p, x_p^d in B                          (couplings x + delta in B)
  * reachability-constrained: additionally |delta| <= tau * Delta_i, |delta_p| <= tau * Delta_{i-1},
    Delta_i = max |x_i(k+1) - x_i(k)| over the full domain (exact MILP bounds of the closed-loop step map).
  * the leader is fixed at the equilibrium: for follower 1, x_p = x_p^d = 0.
Constants: c_0 = min over the boundary of B of V (level-set radius: {V <= c} lies in (c / c_0) B),
c_1 = max of V over B.
"""

from __future__ import annotations

import numpy as np
import torch

from .bounds import box_layer_bounds, output_bounds
from . import bab
from .certificate import Q_DIM, Cert, Policy, VectorCert, compile_increment, compile_query
from .graph import Builder, MaskedNet
from .milp import maximize
from .platoon import Platoon


def query_box(pl: Platoon, i: int, delta: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, tuple]:
    """(lo, hi, couplings) of follower i's query box; ``delta`` [N, 2] per-step bounds, None = full delay domain."""
    S, E = pl.box
    b = np.array([S, E])
    own = pl.tau * delta[i] if delta is not None else 2 * b
    pred = np.zeros(2) if i == 0 else (pl.tau * delta[i - 1] if delta is not None else 2 * b)
    xp = np.zeros(2) if i == 0 else b
    hi = np.concatenate([b, np.minimum(own, 2 * b), xp, np.minimum(pred, 2 * b), [pl.w_bound]])
    couplings = tuple((a, a + 2, -b[a % 2], b[a % 2]) for a in (0, 1, 4, 5))
    return -hi, hi, couplings


def _extreme(net: MaskedNet, lo, hi, coef, rows=(), sense="max", time_limit=30.0) -> float:
    r = maximize(net, lo, hi, box_layer_bounds(net, lo, hi), coef, list(rows), [], time_limit, sense)
    return r.bound


def reach_bounds(policy: Policy | None, pl: Platoon) -> np.ndarray:
    """Delta [N, 2]: exact bound of |x_i(k+1) - x_i(k)| over the full delay domain (4 MILPs per follower).

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
            out[i, k] = max(_extreme(net, lo, hi, e, rows), -_extreme(net, lo, hi, e, rows, "min"))
    return out


def compile_cert(V: Cert) -> MaskedNet:
    b = Builder(len(V.scale))
    return b.build(V.compile(b, b.input(list(range(len(V.scale))))))


def level_constants(V: Cert, box: np.ndarray, exact: bool = True) -> tuple[float, float]:
    """(c_0, c_1): a sound lower bound of min of V over the boundary faces of the box, and a sound upper bound of
    max of V over the box. exact: solve one MILP per face (tight); else one batched CROWN pass (cheap, looser)."""
    net = compile_cert(V)
    faces = []
    for d in range(len(box)):
        for s in (-1.0, 1.0):
            lo, hi = -box.copy(), box.copy()
            lo[d] = hi[d] = s * box[d]
            faces.append((lo, hi))
    one = np.ones(1)
    if exact:
        c1 = _extreme(net, -box, box, one)
        c0 = min(_extreme(net, lo, hi, one, sense="min") for lo, hi in faces)
        return float(c0), float(c1)
    lo = torch.as_tensor(np.stack([f[0] for f in faces] + [-box]))
    hi = torch.as_tensor(np.stack([f[1] for f in faces] + [box]))
    C = torch.tensor([[1.0], [-1.0]], dtype=torch.float64)
    ub = output_bounds(net, lo, hi, C)[0].numpy()
    return float((-ub[:-1, 1]).min()), float(ub[-1, 0])


def vector_property(vc: VectorCert, policy: Policy | None, pl: Platoon, i: int, delta: np.ndarray | None,
                    c_0: float) -> bab.Property:
    """G_i <= 0 on follower i's delay domain where level_i <= c_0 (stated as the four V's <= c_0, so that a cell
    is discarded as soon as one of them provably exceeds c_0)."""
    lo, hi, couplings = query_box(pl, i, delta)
    regions = tuple((np.eye(6)[k], c_0, "<=") for k in range(2, 6))
    return bab.Property(compile_query(vc, policy, pl, i, c_0), np.eye(6)[0], 0.0, lo, hi, couplings, regions)
