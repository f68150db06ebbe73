"""Baseline: quadratic vector certificate V_P(x) = sqrt(x^T P x) from an LMI (cvxpy), for the linear networks.

LMI: the smallest contraction rate t of the delay-compensated closed loop M_i = I + dt (T_i - tau dt A1_i T_i) (x^+
= M_i x + dt A1_i eps + dt e_v (s + w), A1_i = [[0, 0], [a1_i, b1_i]], T_i the drift of ``domain.delay_matrix``)
that one P serves for every subsystem:  M_i^T P M_i <= t P (all i), P >= I, by bisection on t (each step an SDP
feasibility problem). For the quadratic norm every term of condition (N) of ``certificate.py`` has a closed form, so
the certificate is checked soundly by the triangle inequality on the level set {V_P <= c_0}, c_0 = min over the
boundary of B of V_P = min_d b_d / sqrt((P^-1)_dd) (so the level set lies in B), in units of c_0:

    sup V_P(x^+) / c_0 <= ||M_i||_P + dt (|a1_i| eps_q + |b1_i| eps_v) ||e_v||_P / c_0 + dt ||e_v||_P G_i kappa_P
                       <= rho

with ||M||_P = sigma_max(L^T M L^-T) (P = L L^T), kappa_P = ||k||_{P^-1} (dual norm), eps from the same
reachability bounds as the neural certificate (Delta from P's dual norms), and the rows c_n = dt ||e_v||_P G_i kappa_P,
c_s = rho - c_n, gamma = dt ||e_v||_P, which make (N) follow from the inequality. On the full delay domain x^d is
free in the level set and the delay term is bounded by dt ||A1_i||_P ||x^d - x||_P <= 2 dt ||A1_i||_P c_0.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from .domain import delay_matrix, reachable_delay
from .model import Network


def _dual(P_inv: np.ndarray, l) -> float:
    l = np.asarray(l, dtype=np.float64)
    return float(np.sqrt(l @ P_inv @ l))


def _closed_loop(net: Network, i: int, reach: bool) -> tuple[np.ndarray, np.ndarray]:
    """(M_i, A1_i) with x^+ = M_i x + dt A1_i eps + dt e_v (s + w) and x^d = D_i x + eps."""
    A0 = np.array([[0.0, 1.0], [net.a0[i], 0.0]])
    A1 = np.array([[0.0, 0.0], [net.a1[i], net.b1[i]]])
    return np.eye(2) + net.dt * (A0 + A1 @ delay_matrix(net, i, reach)), A1


def lmi_certificate(net: Network, reach: bool = True, tol: float = 1e-4) -> tuple[np.ndarray | None, float]:
    """(P, t): the common quadratic Lyapunov matrix with the smallest contraction rate t found by bisection
    (None if even t = 1 is infeasible)."""
    Ms = [_closed_loop(net, i, reach)[0] for i in range(net.n)]
    lo, hi, best = 0.0, 1.0, None
    while hi - lo > tol:
        t = (lo + hi) / 2
        P = cp.Variable((2, 2), symmetric=True)
        cons = [P >> np.eye(2)] + [M.T @ P @ M << t * P for M in Ms]
        prob = cp.Problem(cp.Minimize(0), cons)
        prob.solve(solver=cp.CLARABEL)
        if prob.status == cp.OPTIMAL:
            hi, best = t, (P.value + P.value.T) / 2
        else:
            lo = t
    return best, hi


def check_quadratic(net: Network, P: np.ndarray, rho: float, reach: bool) -> dict:
    """Sound per-subsystem check of the sufficient condition above; returns the bound and verdict per subsystem."""
    L = np.linalg.cholesky(P)
    P_inv = np.linalg.inv(P)
    c_0 = min(b / np.sqrt(P_inv[d, d]) for d, b in enumerate(net.box))
    w_rel = net.w_bound / c_0
    ev = np.array([0.0, 1.0])
    ev_norm = float(np.sqrt(ev @ P @ ev))
    kappa = _dual(P_inv, net.channel)
    dt = net.dt
    rows = []
    for i in range(net.n):
        M, A1 = _closed_loop(net, i, reach)
        contraction = float(np.linalg.norm(L.T @ M @ np.linalg.inv(L.T), 2))
        s_i = net.coupling(i) * kappa
        if reach:  # in units of c_0: level 1, disturbance w_bar / c_0
            _, (eps_q, eps_v) = reachable_delay(net, i, lambda l: _dual(P_inv, l), 1.0, kappa, w_rel)
            delay = dt * (abs(net.a1[i]) * eps_q + abs(net.b1[i]) * eps_v) * ev_norm
        else:
            delay = dt * float(np.linalg.norm(L.T @ A1 @ np.linalg.inv(L.T), 2)) * 2  # eps = x^d - x, V_P <= 2
        bound = contraction + delay + dt * ev_norm * s_i
        rows.append({"subsystem": i, "contraction": contraction, "delay_term": delay, "bound": bound,
                     "verified": bool(bound <= rho)})
    return {"verified": all(r["verified"] for r in rows), "per_subsystem": rows, "c_0": float(c_0),
            "worst_bound": max(r["bound"] for r in rows)}
