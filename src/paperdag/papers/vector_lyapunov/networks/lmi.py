"""Baseline: quadratic vector certificate V_P(x) = sqrt(x^T P x) from an LMI (cvxpy), for the linear networks.

LMI: the smallest contraction rate t of the delay-compensated closed loops M_ij = I + dt (A0_i + A1_i D_ij)
(x^+ = M_ij x + dt A1_i eps + dt e_v (s + w), A1_i = [[0, 0], [a1_i, b1_i]], D_ij = I - j dt T_i of
``domain.delay_matrix`` on piece j = 0 .. tau of the delay domain) that one P serves for every subsystem and piece:
M_ij^T P M_ij <= t P (all i, j), P >= I, by bisection on t (each step an SDP feasibility problem). For the
quadratic norm every term of condition (N) of ``certificate.py`` has a closed form, so the certificate is checked
soundly by the triangle inequality on the level set {V_P <= c_0}, c_0 = min over the boundary of B of
V_P = min_d b_d / sqrt((P^-1)_dd) (so the level set lies in B), in units of c_0:

    sup V_P(x^+) / c_0 <= ||M_ij||_P + dt (|a1_i| eps_q + |b1_i| eps_v) ||e_v||_P / c_0 + dt ||e_v||_P G_i kappa_P
                       <= rho

with ||M||_P = sigma_max(L^T M L^-T) (P = L L^T), kappa_P = ||k||_{P^-1} (dual norm), eps from the same
unrolled-history domain as the neural certificate (``history_eps_quadratic``, SOCPs),
and the rows c_n = dt ||e_v||_P G_i kappa_P, c_s = rho - c_n, gamma = dt ||e_v||_P, which make (N) follow from
the inequality. On the full delay domain x^d is free in the level set and the delay term is bounded by
dt ||A1_i||_P ||x^d - x||_P <= 2 dt ||A1_i||_P c_0.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from .domain import delay_matrix, piece_histories, pieces, subsystem_loop
from .model import Network


def _dual(P_inv: np.ndarray, l) -> float:
    l = np.asarray(l, dtype=np.float64)
    return float(np.sqrt(l @ P_inv @ l))


def _closed_loop(net: Network, i: int, j: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(M_ij, dt A1_i) with x^+ = M_ij x + dt A1_i eps + dt e_v (s + w) and x^d = D_ij x + eps (piece j of the
    reachability-constrained domain; None: the full one): M_ij = Ax + Ad D_ij from the subsystem's loop
    (``domain.subsystem_loop``: Ax = I + dt A0_i, Ad = dt A1_i)."""
    Ax, Ad, _ = subsystem_loop(net, i)
    return Ax + Ad @ delay_matrix(net, i, j), Ad


def lmi_certificate(net: Network, reach: bool = True, tol: float = 1e-4) -> tuple[np.ndarray | None, float]:
    """(P, t): the common quadratic Lyapunov matrix with the smallest contraction rate t found by bisection
    (None if even t = 1 is infeasible), over every subsystem and every piece of the delay domain."""
    Ms = [_closed_loop(net, i, j)[0] for i in range(net.n) for j in pieces(net, reach)]
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


def history_eps_quadratic(net: Network, i: int, L: np.ndarray, channel: float, w_bound: float) -> np.ndarray:
    """eps_i [tau + 1, 2] of the quadratic level set {|L^T x| <= 1}: max |(x^d - D_ij x(k))_c| over subsystem i's
    histories behind piece j (``domain.piece_histories``) whose states all lie in it (one SOCP per history and
    component, Clarabel; its value plus 1e-6 relative and 1e-9, above the solver's tolerance; the maximum over the
    piece's histories), the quadratic counterpart of ``domain.history_eps``."""
    eps = np.zeros((net.tau + 1, 2))
    for j in range(1, net.tau + 1):
        loop = subsystem_loop(net, i)
        for h in piece_histories(*loop, np.array([channel, w_bound]), delay_matrix(net, i, j), net.tau, j):
            u = cp.Variable(h.A_eq.shape[1])
            box = np.isfinite(h.hi)
            cons = [h.A_eq @ u == 0, u[box] <= h.hi[box], u[box] >= h.lo[box]]
            cons += [cp.norm(L.T @ u[cols]) <= 1 for cols in h.states]
            for c in range(2):
                prob = cp.Problem(cp.Maximize(h.objective[c] @ u), cons)
                prob.solve(solver=cp.CLARABEL)
                eps[j, c] = max(eps[j, c], float(prob.value) * (1 + 1e-6) + 1e-9)
    return eps


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
        s_i = net.coupling(i) * kappa
        if reach:  # in units of c_0: level 1, disturbance w_bar / c_0; the same history domain as the neural one
            eps = history_eps_quadratic(net, i, L, s_i, w_rel)
        worst = None
        for j in pieces(net, reach):
            M, Ad = _closed_loop(net, i, j)
            contraction = float(np.linalg.norm(L.T @ M @ np.linalg.inv(L.T), 2))
            if reach:
                delay = dt * (abs(net.a1[i]) * eps[j, 0] + abs(net.b1[i]) * eps[j, 1]) * ev_norm
            else:
                delay = float(np.linalg.norm(L.T @ Ad @ np.linalg.inv(L.T), 2)) * 2  # eps = x^d - x, V_P <= 2
            row = {"subsystem": i, "piece": -1 if j is None else j, "contraction": contraction,
                   "delay_term": delay, "bound": contraction + delay + dt * ev_norm * s_i}
            worst = row if worst is None or row["bound"] > worst["bound"] else worst
        rows.append(worst | {"verified": bool(worst["bound"] <= rho)})
    return {"verified": all(r["verified"] for r in rows), "per_subsystem": rows, "c_0": float(c_0),
            "worst_bound": max(r["bound"] for r in rows)}
