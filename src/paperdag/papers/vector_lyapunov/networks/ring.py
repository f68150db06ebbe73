"""Monolithic baselines that share the compositional certificate's function (issue item 2): only the verification
differs.

(R) One ring-wide query of U(X) = max_i V(x_i), V the trained compositional certificate of the first delay:

    U(X^+) <= max( rho max(U(X), U(X^d)) + gamma ||w||_1 ,  rho c_0 )

for X, X^d with U(X), U(X^d) <= c_0, |w_i| <= w_bar, on every piece j = 0 .. tau of the compositional certificate's
own delay domain (X^d_i = D_ij x_i + E_i, |E_i| <= eps_ij, its exact-LP eps and c_0, ``certify.constants``), with
the neighbour channels computed exactly (``monolithic.dynamics``). (N) of ``certificate.py`` implies (R): with
M = max(U(X), U(X^d)), every |k . x_j^(d)| <= kappa M, so c_n |s_i| / (G_i kappa) <= c_n M and
V(x_i^+) <= max(rho M + gamma |w_i|, rho c_0) for every i. So (R) is true wherever the compositional certificate is
proved; whether the ring-wide query can be decided is what the baseline measures. It is verified by the same branch
and bound + MILP with N times the per-property budget (cells and MILPs; the same nodes per MILP), up to the first
cell the budget leaves undecided (``bab.verify(stop_at_unknown=True)``): "unknown" = undecided at that budget.

(Q) A whole-ring quadratic Razumikhin LMI (Fridman, Introduction to Time-Delay Systems, 2014, sec. 6.2, the
discrete Razumikhin condition with the S-procedure): V_P(X) = X^T P X with P >= I and, for the ring's true delay
X^+ = Ax X + Ad X(k - tau) (``monolithic.dynamics`` at piece 0: the exact ring, Ad its delayed part),

    [[Ax^T P Ax - r l P, Ax^T P Ad], [Ad^T P Ax, Ad^T P Ad - r (1 - l) P]] <= 0,   r = rho^2,

for one l of a declared grid in [0, 1] (the S-procedure multiplier), which gives
V_P(X^+) <= r (l V_P(X) + (1 - l) V_P(X(k - tau))) <= r max(V_P(X), V_P(X(k - tau))): the Razumikhin decrease of
the window maximum on the true delay (no domain pieces). Solved by cvxpy (Clarabel) per l; proved when a solve
is optimal with a P whose eigenvalue check passes in floating point (the LMI's matrix <= tol), not proved when
every l is infeasible, unknown when a solve stops without a status (the solver's iteration budget).
"""

from __future__ import annotations

import time

import cvxpy as cp
import numpy as np

from ..params import BudgetParams
from ..verifier import bab
from ..verifier.graph import Builder, MaskedNet, Sym
from .certificate import NetworkCert
from .certify import WORK, Constants
from .model import Network
from .monolithic import dynamics, ring_step, trace_ring_step


def max_of_blocks(nc: NetworkCert, b: Builder, X: Sym, n: int) -> Sym:
    """U(X) = max_i V(x_i) traced into ``b`` (a chain of ``max2``)."""
    out = None
    for i in range(n):
        sel = np.zeros((2, 2 * n))
        sel[0, 2 * i], sel[1, 2 * i + 1] = 1.0, 1.0
        v = nc.V.compile(b, b.linear(X, sel))
        out = v if out is None else b.max2(out, v)
    return out


def compile_ring(nc: NetworkCert, net: Network, j: int, c_0: float) -> MaskedNet:
    """Masked ReLU net Z = (X, E, w) [5N] -> (G, U(X), U(X^d)) on piece j, G = U(X^+) - max(R, rho c_0)."""
    n = net.n
    b = Builder(5 * n)
    X, Xd, nxt, w = trace_ring_step(b, net, j)
    ux, uxd = max_of_blocks(nc, b, X, n), max_of_blocks(nc, b, Xd, n)
    gamma = float(nc.gamma().detach())
    R = b.add(b.max2(ux, uxd), b.linear(b.abs(w), np.ones((1, n))), weights=(nc.rho, gamma))
    G = b.add(max_of_blocks(nc, b, nxt, n), b.max2(R, b.linear(w, np.zeros((1, n)), nc.rho * c_0)),
              weights=(1.0, -1.0))
    return b.build(b.cat(G, ux, uxd))


def ring_decrease(nc: NetworkCert, net: Network, j: int, Z: np.ndarray, c_0: float) -> np.ndarray:
    """(G, U(X), U(X^d)) [B, 3] of (R) in numpy/torch arithmetic (the compiled net's independent twin)."""
    import torch

    n = net.n
    X, Xd, nxt, w = ring_step(net, j, Z)

    def U(Y):
        with torch.no_grad():
            return np.max([nc.V(torch.as_tensor(Y[:, 2 * i:2 * i + 2])).numpy() for i in range(n)], axis=0)

    ux, uxd = U(X), U(Xd)
    R = nc.rho * np.maximum(ux, uxd) + float(nc.gamma().detach()) * np.abs(w).sum(1)
    return np.stack([U(nxt) - np.maximum(R, nc.rho * c_0), ux, uxd], 1)


def ring_property(nc: NetworkCert, net: Network, j: int, k: Constants) -> bab.Property:
    """G <= 0 on piece j where U(X), U(X^d) <= c_0 (query box: B^N, the pieces' eps, w_bar)."""
    hi = np.concatenate([np.array(list(net.box) * net.n), k.eps[:, j].reshape(-1), np.full(net.n, net.w_bound)])
    regions = ((np.eye(3)[1], k.c_0, "<="), (np.eye(3)[2], k.c_0, "<="))
    return bab.Property(compile_ring(nc, net, j, k.c_0), np.eye(3)[0], 0.0, -hi, hi, (), regions)


def verify_ring(nc: NetworkCert, net: Network, budget: BudgetParams, k: Constants) -> dict:
    """(R) piece by piece, N times the per-property budget, stopping at the first undecided cell. Outcome: proved,
    refuted (a counterexample) or unknown (undecided at the budget); work counts and seconds (the constants are the
    compositional certificate's, computed once by the caller)."""
    t0 = time.perf_counter()
    work = dict.fromkeys(WORK, 0)
    verified, refuted, j = True, 0, 0
    for j in range(net.tau + 1):
        res = bab.verify(ring_property(nc, net, j, k), budget.max_cells * net.n, budget.max_depth,
                         max_milp=budget.max_milp * net.n, milp_nodes=budget.milp_nodes,
                         stop_after_cex=budget.stop_after_cex, stop_at_unknown=True)
        work = {key: work[key] + v for key, v in res.work().items()}
        verified &= res.verified
        refuted += len(res.counterexamples)
        if not res.verified:
            break
    outcome = "proved" if verified else "refuted" if refuted else "unknown"
    return {"n": net.n, "outcome": outcome, "verified": verified, "counterexamples": refuted, **work,
            "pieces_checked": j + 1, "c_0": k.c_0, "seconds": time.perf_counter() - t0}


def razumikhin_lmi(net: Network, rho: float, multipliers: list[float], max_iter: int, tol: float = 1e-7) -> dict:
    """(Q) for the whole ring (``monolithic.dynamics`` at piece 0: X^+ = Ax X + Ad X(k - tau) + Bw w)."""
    _, Ax, Ad, _ = dynamics(net, 0)
    return {"n": net.n} | razumikhin_lmi_matrices(Ax, Ad, rho, multipliers, max_iter, tol)


def razumikhin_lmi_matrices(Ax: np.ndarray, Ad: np.ndarray, rho: float, multipliers: list[float], max_iter: int,
                            tol: float = 1e-7) -> dict:
    """(Q) for X^+ = Ax X + Ad X^d: one Clarabel solve per multiplier l (minimise 0 s.t. P >= I and the LMI), until
    one is proved. Outcome proved / not_proved (every l infeasible) / unknown (a solve ended without a decided
    status: inaccurate, or stopped at ``max_iter``). Work: solves, solver iterations, seconds, the matrix size."""
    t0 = time.perf_counter()
    n2 = len(Ax)
    r = rho ** 2
    solves, iters, outcome, used, undecided = 0, 0, "not_proved", None, False
    for lam in multipliers:
        P = cp.Variable((n2, n2), symmetric=True)
        M = cp.bmat([[Ax.T @ P @ Ax - r * lam * P, Ax.T @ P @ Ad], [Ad.T @ P @ Ax, Ad.T @ P @ Ad - r * (1 - lam) * P]])
        prob = cp.Problem(cp.Minimize(0), [P >> np.eye(n2), (M + M.T) / 2 << 0])
        try:
            prob.solve(solver=cp.CLARABEL, max_iter=max_iter)
        except cp.error.SolverError:
            undecided = True
            continue
        solves += 1
        iters += int(prob.solver_stats.num_iters or 0)
        if prob.status == cp.OPTIMAL:
            Pv = (P.value + P.value.T) / 2
            Mv = np.block([[Ax.T @ Pv @ Ax - r * lam * Pv, Ax.T @ Pv @ Ad],
                           [Ad.T @ Pv @ Ax, Ad.T @ Pv @ Ad - r * (1 - lam) * Pv]])
            if np.linalg.eigvalsh(Pv).min() > 0 and np.linalg.eigvalsh((Mv + Mv.T) / 2).max() <= tol:
                outcome, used = "proved", lam
                break
            undecided = True
        elif prob.status not in (cp.INFEASIBLE,):
            undecided = True
    if outcome != "proved" and undecided:
        outcome = "unknown"
    return {"outcome": outcome, "verified": outcome == "proved", "multiplier": used, "solves": solves,
            "solver_iterations": iters, "size": 2 * n2, "seconds": time.perf_counter() - t0}
