"""The verified delay domain of subsystem i and the bounds that define it.

Query z = (x, eps, s, w): x in the state box B, the delayed state x^d = D_i x + eps, the neighbour channel s and
the disturbance w. On the reachability-constrained domain |eps| <= eps_i (``reachable_delay``, over the level set
{V <= c_0}); on the full delay domain D_i = I and x^d = x + eps anywhere in B.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .model import Network


def reachable_delay(net: Network, i: int, dual: Callable[[tuple[float, float]], float], c_0: float, kappa: float,
                    w_bound: float) -> tuple[np.ndarray, np.ndarray]:
    """(Delta_i, eps_i) on the level set {V <= c_0}, ``dual(l)`` = max {l . y : V(y) <= 1}.

    Delta_i bounds the one-step increment |x_i(m+1) - x_i(m)|: with x, x^d in the level set,
    |s| <= s_i = G_i kappa c_0 and |w| <= w_bound the step is linear in independent variables, so
        Delta_q = dt c_0 dual((0, 1)),
        Delta_v = dt (c_0 |a0_i| dual((1, 0)) + c_0 dual((a1_i, b1_i)) + s_i + w_bound).
    Reachable delayed state: summing the tau increments back from x(k), with v(k-j) = v(k) -+ j Delta_v etc.,
        x^d = (I - tau dt T_i) x + eps,   |eps_q| <= dt Delta_v S1,
        |eps_v| <= dt (|a0_i| Delta_q S1 + (|a1_i| Delta_q + |b1_i| Delta_v) S2 + tau (s_i + w_bound)),
    S1 = tau (tau + 1) / 2, S2 = S1 + tau^2 (the window [k - 2 tau, k] lies in the level set)."""
    tau, dt, a0, a1, b1 = net.tau, net.dt, abs(net.a0[i]), abs(net.a1[i]), abs(net.b1[i])
    s1, s2 = tau * (tau + 1) / 2, tau * (tau + 1) / 2 + tau**2
    s_i = net.coupling(i) * kappa * c_0
    dq = dt * c_0 * dual((0.0, 1.0))
    dv = dt * (c_0 * a0 * dual((1.0, 0.0)) + c_0 * dual((net.a1[i], net.b1[i])) + s_i + w_bound)
    eps = [dt * dv * s1, dt * (a0 * dq * s1 + (a1 * dq + b1 * dv) * s2 + tau * (s_i + w_bound))]
    return np.array([dq, dv]), np.array(eps)


def delay_matrix(net: Network, i: int, reach: bool) -> np.ndarray:
    """D_i with x^d = D_i x + eps: I - tau dt T_i on the reachability-constrained domain (T_i = [[0, 1],
    [a0_i + a1_i, b1_i]], the drift at the current state), I on the full delay domain (eps = x^d - x)."""
    if not reach:
        return np.eye(2)
    T = np.array([[0.0, 1.0], [net.a0[i] + net.a1[i], net.b1[i]]])
    return np.eye(2) - net.tau * net.dt * T


def network_box(net: Network, i: int, eps: np.ndarray | None, c_0: float, kappa: float):
    """(lo, hi, couplings) of subsystem i's query z = (x, eps, s, w): x in B, |eps| <= eps_i (``eps`` [N, 2], the
    reachability-constrained domain, x^d = D_i x + eps) or, with eps None, x^d = x + eps in B (full delay domain),
    |s| <= G_i kappa c_0, |w| <= w_bar."""
    S, E = net.box
    b = np.array([S, E])
    e = eps[i] if eps is not None else 2 * b
    hi = np.concatenate([b, e, [net.coupling(i) * kappa * c_0, net.w_bound]])
    couplings = tuple((a, a + 2, -b[a], b[a]) for a in (0, 1)) if eps is None else ()
    return -hi, hi, couplings
