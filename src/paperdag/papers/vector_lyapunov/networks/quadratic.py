"""The quadratic baseline checked exactly: V_P(x) = ||L^T x|| (P = L L^T, the LMI's P of ``lmi.py``) on condition (N)
of ``certificate.py`` itself, by a branch and bound with a count budget, instead of the closed-form triangle bound of
``lmi.check_quadratic``.

In units of c_0 (the largest level of V_P inside the box B), per subsystem i and piece j of the reachability-
constrained delay domain, with x^+ = M x + A_d eps + b (s + w) (M = A_x + A_d D_ij, b = dt e_v, ``lmi._closed_loop``),
x^d = D_ij x + eps and the rows of ``lmi.check_quadratic`` (gamma = ||b||_P, c_n = gamma s_bar, c_s = rho - c_n,
s_bar = G_i kappa_P, so c_n |s| / (G_i kappa_P) = gamma |s|):

    F(z) = V_P(x^+) - max(c_s max(V_P(x), V_P(x^d)) + gamma (|s| + |w|), rho)  <=  0

for every z = (x, eps, s, w) with V_P(x) <= 1, V_P(x^d) <= 1, |eps| <= eps_ij (``lmi.history_eps_quadratic``),
|s| <= s_bar, |w| <= w_bar / c_0. Since V_P(y) = max over the unit disc of u . L^T y,

    sup_z F = max over unit u of g(u),   g(u) = sup_z [u . L^T x^+(z) - max(c_s max(V_P(x), V_P(x^d))
                                                                         + gamma (|s| + |w|), rho)],

and for each u the inner supremum is a concave maximisation over a convex set (one SOCP, Clarabel). g is convex in u
(a supremum of functions affine in u), so over an arc of the unit circle it is at most its largest value at the
arc's two ends and at the meeting point of their tangents, u(theta_m) / cos(delta / 2), the three corners of a
triangle that holds the arc. Best-first bisection of the arc with the largest such bound: the unit proves when every
arc's bound is below -(1e-9 + 1e-6 rho) (above the solver's tolerance, as the history domain's SOCPs), and is refuted
when the maximiser z of some g(u) at a unit u, pulled 1e-6 towards 0 so it satisfies every constraint exactly, has
F(z) > 0 in plain arithmetic (a concrete state, since F(z) >= g(u)); a spent budget of SOCP solves leaves it unknown.

Two P are checked, and the quadratic class holds in a case if either is proved: the LMI's (the smallest contraction
rate of the loops, ``lmi.lmi_certificate``) and ``invariance_certificate``'s, the S-procedure LMI of a sufficient
condition of (N): with the rows above R >= rho, so (N) holds if every x^+ stays in the rho-level,

    [M A_d b b]^T P [M A_d b b] <= blkdiag(l P, diag(t), m_s, m_w),   l + t . eps^2 + m_s s_bar^2 + m_w w_bar^2 <= r^2

for every subsystem and piece (multipliers t, m_s, m_w >= 0 of |eps_c| <= eps_c, |s| <= s_bar, |w| <= w_bar, and l of
V_P(x) <= 1), the level set inside the box (Schur: [[P, e_d], [e_d^T, b_d^2]] >= 0), with the smallest r over an
even grid of l (an SDP per l: l P is bilinear). Its constants (eps, s_bar, w_bar, box) are those of the LMI's P in
its units of c_0; the exact check then recomputes them for the new P.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import cvxpy as cp
import numpy as np

from .domain import delay_matrix, pieces
from .lmi import _closed_loop, _dual, history_eps_quadratic
from .model import Network

FIRST_ARCS = 4  # the unit circle starts as quarter arcs (tangent corners at 1 / cos(pi / 4) of the circle)
SHRINK = 1e-6  # a witness is pulled this fraction towards 0, into the interior of every constraint


@dataclass(frozen=True)
class Unit:
    """Subsystem i on piece j in units of c_0: the loop (M, A_d, b, D), L^T, the bounds (eps, s_bar, w_bar) and the
    comparison row (c_s, gamma) with the level rho."""

    M: np.ndarray
    Ad: np.ndarray
    b: np.ndarray
    D: np.ndarray
    Lt: np.ndarray
    eps: np.ndarray
    s_bar: float
    w_bar: float
    c_s: float
    gamma: float
    rho: float

    def decrease(self, z: np.ndarray) -> float:
        """F(z) of the module docstring, z = (x, eps, s, w)."""
        x, e, s, w = z[:2], z[2:4], z[4], z[5]
        V = lambda y: float(np.linalg.norm(self.Lt @ y))  # noqa: E731
        x_plus = self.M @ x + self.Ad @ e + self.b * (s + w)
        comparison = self.c_s * max(V(x), V(self.D @ x + e)) + self.gamma * (abs(s) + abs(w))
        return V(x_plus) - max(comparison, self.rho)

    def feasible(self, z: np.ndarray) -> bool:
        """z lies in the unit's domain (exactly, no tolerance)."""
        x, e = z[:2], z[2:4]
        return bool(np.linalg.norm(self.Lt @ x) <= 1 and np.linalg.norm(self.Lt @ (self.D @ x + e)) <= 1
                    and np.all(np.abs(e) <= self.eps) and abs(z[4]) <= self.s_bar and abs(z[5]) <= self.w_bar)


class DualProblem:
    """g(u) of one unit as a parametrised SOCP (compiled once, re-solved for each u)."""

    def __init__(self, q: Unit):
        self.u = cp.Parameter(2)
        self.x, self.e, self.s, self.w = cp.Variable(2), cp.Variable(2), cp.Variable(), cp.Variable()
        r, m, a_s, a_w = cp.Variable(), cp.Variable(), cp.Variable(), cp.Variable()
        x_plus = q.M @ self.x + q.Ad @ self.e + q.b * (self.s + self.w)
        vx, vxd = cp.norm(q.Lt @ self.x), cp.norm(q.Lt @ (q.D @ self.x + self.e))
        free = q.eps > 0  # a zero bound (piece 0: x^d = x) is an equality: as a cone of width 0 it stalls Clarabel
        cons = [vx <= 1, vxd <= 1, m >= vx, m >= vxd, a_s >= cp.abs(self.s),
                a_w >= cp.abs(self.w), a_s <= q.s_bar, a_w <= q.w_bar, r >= q.rho,
                r >= q.c_s * m + q.gamma * (a_s + a_w)]
        cons += [self.e[~free] == 0] if not free.all() else []
        cons += [cp.abs(self.e[free]) <= q.eps[free]] if free.any() else []
        self.problem = cp.Problem(cp.Maximize(self.u @ (q.Lt @ x_plus) - r), cons)

    def __call__(self, u: np.ndarray) -> tuple[float, np.ndarray]:
        """(g(u), the maximiser z)."""
        self.u.value = u
        self.problem.solve(solver=cp.CLARABEL)
        if self.problem.status != cp.OPTIMAL:
            raise RuntimeError(f"quadratic check: SOCP {self.problem.status}")
        z = np.concatenate([self.x.value, self.e.value, [float(self.s.value), float(self.w.value)]])
        return float(self.problem.value), z


def _direction(theta: float, scale: float = 1.0) -> np.ndarray:
    return scale * np.array([np.cos(theta), np.sin(theta)])


def check_unit(q: Unit, nodes: int) -> dict:
    """Branch and bound over the dual direction u (module docstring) with at most ``nodes`` SOCP solves (fewer than
    the first arcs need: none, unknown, no bounds): outcome ``proved`` / ``refuted`` / ``unknown``, sup F bracketed by
    ``sup_lower`` (the largest g(u) at a unit u) and ``sup_bound`` (the largest bound of the arcs when it stopped), the
    witness (refuted only), the SOCPs solved and the arcs bounded."""
    if nodes < 2 * FIRST_ARCS:
        return {"outcome": "unknown", "sup_bound": None, "sup_lower": None, "solves": 0, "arcs": 0,
                "witness": None, "violation": None}
    g = DualProblem(q)
    margin = 1e-9 + 1e-6 * q.rho
    solves, lower, witness = 0, -np.inf, None

    def at_unit(theta: float) -> float:
        nonlocal solves, lower, witness
        solves += 1
        val, z = g(_direction(theta))
        lower = max(lower, val)
        shrunk = (1 - SHRINK) * z
        if witness is None and q.feasible(shrunk) and q.decrease(shrunk) > 0:
            witness = shrunk
        return val

    def corner(a: float, c: float) -> float:
        nonlocal solves
        solves += 1
        return g(_direction((a + c) / 2, 1 / np.cos((c - a) / 2)))[0]

    thetas = [2 * np.pi * k / FIRST_ARCS for k in range(FIRST_ARCS + 1)]
    ends = {t: at_unit(t) for t in thetas[:-1]}
    ends[thetas[-1]] = ends[thetas[0]]
    heap = [(-max(ends[a], ends[c], corner(a, c)), a, c) for a, c in zip(thetas, thetas[1:])]
    heapq.heapify(heap)
    arcs = len(heap)
    while witness is None and -heap[0][0] > -margin and solves + 3 <= nodes:
        _, a, c = heapq.heappop(heap)
        mid = (a + c) / 2
        ends[mid] = at_unit(mid)
        for lo, hi in ((a, mid), (mid, c)):
            heapq.heappush(heap, (-max(ends[lo], ends[hi], corner(lo, hi)), lo, hi))
            arcs += 1
    bound = -heap[0][0]  # every arc's bound is at most the top one's
    outcome = "refuted" if witness is not None else "proved" if bound <= -margin else "unknown"
    return {"outcome": outcome, "sup_bound": float(bound), "sup_lower": float(lower), "solves": solves,
            "arcs": arcs, "witness": None if witness is None else witness.tolist(),
            "violation": None if witness is None else q.decrease(witness)}


def level(net: Network, P: np.ndarray) -> float:
    """c_0 = min_d b_d / sqrt((P^-1)_dd): the largest level of V_P inside the box B (as ``lmi.check_quadratic``)."""
    P_inv = np.linalg.inv(P)
    return min(b / np.sqrt(P_inv[d, d]) for d, b in enumerate(net.box))


def units(net: Network, P: np.ndarray, rho: float) -> list[tuple[int, int, Unit]]:
    """(subsystem, piece, Unit) of every subsystem and piece of the reachability-constrained domain (the level set,
    rows and history domain of ``lmi.check_quadratic``)."""
    L = np.linalg.cholesky(P)
    P_inv = np.linalg.inv(P)
    c_0 = level(net, P)
    w_bar = net.w_bound / c_0
    b = np.array([0.0, net.dt])
    gamma = float(np.linalg.norm(L.T @ b))
    kappa = _dual(P_inv, net.channel)
    out = []
    for i in range(net.n):
        s_bar = net.coupling(i) * kappa
        eps = history_eps_quadratic(net, i, L, s_bar, w_bar)
        for j in pieces(net, True):
            M, Ad = _closed_loop(net, i, j)
            out.append((i, j, Unit(M, Ad, b, delay_matrix(net, i, j), L.T, eps[j], s_bar, w_bar,
                                   rho - gamma * s_bar, gamma, rho)))
    return out


def check_exact(net: Network, P: np.ndarray, rho: float, nodes: int) -> dict:
    """The exact check of V_P on every subsystem and piece: verdict (every unit proved), outcome (``proved`` /
    ``refuted`` if some unit is / ``unknown``), per unit its row of ``check_unit``, and the work (SOCPs, arcs)."""
    return check_units(units(net, P, rho), nodes)


def check_units(us: list[tuple[int, int, Unit]], nodes: int) -> dict:
    """``check_exact`` on units already built (``units``)."""
    rows = [{"subsystem": i, "piece": j} | check_unit(q, nodes) for i, j, q in us]
    outcomes = {r["outcome"] for r in rows}
    outcome = "refuted" if "refuted" in outcomes else "unknown" if "unknown" in outcomes else "proved"
    return {"verified": outcome == "proved", "outcome": outcome, "per_unit": rows,
            "solves": sum(r["solves"] for r in rows), "arcs": sum(r["arcs"] for r in rows),
            "sup_bound": None if any(r["sup_bound"] is None for r in rows) else max(r["sup_bound"] for r in rows)}


def _invariance_sdp(us: list[tuple[int, int, Unit]], box: np.ndarray, lam: float) -> tuple[float, np.ndarray] | None:
    """(r, P) of the invariance S-procedure LMI at multiplier ``lam`` with the smallest r (None: infeasible)."""
    P, r2 = cp.Variable((2, 2), symmetric=True), cp.Variable()
    cons = []
    for d, b in enumerate(box):
        e = np.eye(2)[:, [d]]
        cons.append(cp.bmat([[P, e], [e.T, np.array([[b ** 2]])]]) >> 0)
    for _, _, q in us:
        F = np.hstack([q.M, q.Ad, q.b[:, None], q.b[:, None]])
        t, m_s, m_w = cp.Variable(2, nonneg=True), cp.Variable(nonneg=True), cp.Variable(nonneg=True)
        Z = cp.bmat([[lam * P, np.zeros((2, 4))], [np.zeros((4, 2)), cp.diag(cp.hstack([t, m_s, m_w]))]])
        G = F.T @ P @ F - Z
        cons += [(G + G.T) / 2 << 0, lam + t @ q.eps ** 2 + m_s * q.s_bar ** 2 + m_w * q.w_bar ** 2 <= r2]
    prob = cp.Problem(cp.Minimize(r2), cons)
    prob.solve(solver=cp.CLARABEL)
    if prob.status != cp.OPTIMAL:
        return None
    return float(np.sqrt(max(r2.value, 0.0))), (P.value + P.value.T) / 2


def invariance_certificate(net: Network, P0: np.ndarray, us: list[tuple[int, int, Unit]], step: float) -> dict:
    """The S-procedure P of the module docstring with the constants of ``P0``'s units ``us`` (``units(net, P0,
    rho)``): the smallest r over l = step, 2 step, ... < 1 (P None when every l is infeasible), and the SDPs solved."""
    box = np.asarray(net.box) / level(net, P0)
    best, solves = None, 0
    for k in range(1, int(np.ceil(1 / step))):
        lam = round(k * step, 12)  # the grid's value, not its float product
        solves += 1
        found = _invariance_sdp(us, box, lam)
        if found is not None and (best is None or found[0] < best["r"]):
            best = {"r": found[0], "multiplier": lam, "P": found[1]}
    return (best or {"r": None, "multiplier": None, "P": None}) | {"sdps": solves}


def check_class(net: Network, P_lmi: np.ndarray, rho: float, nodes: int, step: float) -> dict:
    """The quadratic class on one case: ``check_exact`` of the LMI's P and of ``invariance_certificate``'s; outcome
    ``proved`` if either is, ``refuted`` if both are (or the second P does not exist), else ``unknown``."""
    us = units(net, P_lmi, rho)  # the history domain's SOCPs, built once for both uses
    inv = invariance_certificate(net, P_lmi, us, step)
    runs = {"contraction": check_units(us, nodes)}
    if inv["P"] is not None:
        runs["invariance"] = check_exact(net, inv["P"], rho, nodes)
    outcomes = [r["outcome"] for r in runs.values()]
    outcome = "proved" if "proved" in outcomes else "refuted" if set(outcomes) == {"refuted"} else "unknown"
    return {"verified": outcome == "proved", "outcome": outcome, "runs": runs,
            "invariance": {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in inv.items()},
            "solves": sum(r["solves"] for r in runs.values()),
            "sup_bound": min((r["sup_bound"] for r in runs.values() if r["sup_bound"] is not None), default=None)}
