"""Stability and gain of the platoon's relative-error cascade: the necessary condition a strict max-type certificate
(condition (C), rho < 1) puts on the linear delayed loops and on the cascade's gain at DC.

Linear delayed loop of follower i (``model.relative_step`` with the unclipped OVM and the nominal CAV law, i.e. the
residual left out; g_i = ``model.relative_gain``, h_i = ``model.headway``), driven by the predecessor's acceleration
a_p = u_p + w_p (scalar):

    xr(k+1) = A0 xr(k) + b g_i^T xr(k - tau) + e a_p(k),   A0 = [[1, -dt], [0, 1]], b = (0, dt), e = (-h_i dt, -dt)

Stacked over the delay horizon, X(k) = (xr(k), xr(k-1), ..., xr(k-tau)) in R^{2 (tau + 1)}, X(k+1) = A_i X(k) + E_i
a_p(k) (``delayed_loop``). Its spectral radius r_i = max |eig(A_i)| is the isolated follower's (predecessor at rest)
discrete-time stability. The follower's command u_i(k) = g_i^T xr(k - tau) = g_i^T C_tau X(k), so the transfer from
the predecessor's acceleration to the follower's (the classic string-stability channel, Ploeg, van de Wouw & Nijmeijer,
"Lp string stability of cascaded systems", IEEE TCST 22(2), 2014, Def. 2 and Sec. IV; Naus et al., IEEE TVT 59(9),
2010) is

    H_i(z) = g_i^T C_tau (z I - A_i)^{-1} E_i,       a_i = H_i(z) a_{i-1}

and x_i = P_i(z) a_{i-1} with P_i = C_0 (z I - A_i)^{-1} E_i. The HDV-CAV loop of the platoon that alternates follower
i-1 and follower i is |H_{i-1}(e^{jw}) H_i(e^{jw})| (the nonzero eigenvalue of its two-step map of relative errors).
At z = 1 every follower that holds a constant relative state under a constant a_p has u_i = a_p (v~ constant), so
H_i(1) = 1: accelerations pass on at DC gain 1 (``hinf`` of every H_i is >= 1).

The necessary condition judged (``platoon_cascade_admits_contraction``; derivation):
(a) Quiet predecessor (x_p = 0, w = 0). Scaling a query to level c_0 (V, f positively homogeneous; the delay domain
    and B scale with it), (C) gives V_i(x(k+1)) <= max(c_ii m, rho c_0) = rho m, m = the level; in the reachability-
    constrained domain the increments |x - x^d| are those of the window [k - 2 tau, k], so the window max
    m(k) = max_{theta <= 2 tau} V_i(x(k - theta)) obeys m(k + 2 tau + 1) <= rho m(k), and with V equivalent to a
    norm ||X(k)|| <= C rho^{k / (2 tau + 1)}: r_i <= rho^{1 / (2 tau + 1)} for every follower.
(b) Constant leader acceleration a (|a| <= w_bar), w_i = 0 for i >= 2. Every follower has a constant relative
    state x_i(a) (``constant_acceleration_states``: v~ = -h_i a, a_i(s~, v~) = a), a constant history, so delta = 0
    lies in both delay domains, and f_i returns x_i. Scaled to level c_0, (C) of follower i >= 2 gives
    V_i(x_i) <= max(c_ii V_i(x_i) + c_ij V_p(x_{i-1}), rho max(V_i(x_i), V_p(x_{i-1}))) = rho max(...), hence
    V_i(x_i) <= rho V_{i-1}(x_{i-1}) and, along the chain, V(x_i) <= rho^{i-j} V(x_j) for followers j < i of the
    same type (the same V). Where x_i = lambda x_j (lambda >= 0; two followers with the same law give lambda = 1:
    x_i(a) depends only on the own law and a), homogeneity gives lambda <= rho^{i-j}. So: for every pair j < i of
    the same type whose constant-acceleration states are collinear, the DC cycle gain lambda_ji <= rho^{i-j} < 1.
    With identical CAVs (shared gains and residual) lambda = 1 for the second and fourth followers of an H, C, H, C
    platoon: no strict certificate of this form exists from N = 4 on. (A max-type comparison with unit gain on the
    predecessor, V_i(x^+) <= max(c_ii own, V_p), asks only lambda <= 1.)
The frequency sweep beyond DC (the H-infinity norms and loop gains) is reported, not judged: whether a sinusoidal
predecessor stays inside the reachability-constrained domain's increment bounds at every phase is not established.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy import optimize, signal

from .model import Platoon, headway, relative_accel, relative_gain, relative_step


def delayed_loop(pl: Platoon, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(A_i, E_i, C_0, C_u) of follower i's linear delayed loop: X(k+1) = A_i X(k) + E_i a_p(k), xr(k) = C_0 X(k),
    u_i(k) = C_u X(k) = g_i^T xr(k - tau) (module docstring)."""
    tau, dt = pl.tau, pl.dt
    g, h = relative_gain(pl, [i])[0], float(headway(pl, [i])[0])
    n = 2 * (tau + 1)
    A = np.zeros((n, n))
    A[0:2, 0:2] = [[1.0, -dt], [0.0, 1.0]]
    A[0:2, 2 * tau:2 * tau + 2] += np.outer([0.0, dt], g)
    for j in range(1, tau + 1):
        A[2 * j:2 * j + 2, 2 * j - 2:2 * j] = np.eye(2)
    E = np.zeros((n, 1))
    E[0:2, 0] = [-h * dt, -dt]
    C0 = np.zeros((2, n))
    C0[:, 0:2] = np.eye(2)
    Cu = np.zeros((1, n))
    Cu[0, 2 * tau:2 * tau + 2] = g
    return A, E, C0, Cu


def spectral_radius(pl: Platoon, i: int) -> float:
    """r_i = max |eig(A_i)| of follower i's delay-augmented loop (LAPACK eigenvalues)."""
    return float(np.abs(np.linalg.eigvals(delayed_loop(pl, i)[0])).max())


def accel_transfer(pl: Platoon, i: int) -> tuple[np.ndarray, np.ndarray]:
    """(num, den) of H_i(z) = g_i^T C_tau (z I - A_i)^{-1} E_i in descending powers of z (scipy.signal.ss2tf), num
    padded to den's length."""
    A, E, _, Cu = delayed_loop(pl, i)
    num, den = signal.ss2tf(A, E, Cu, np.zeros((1, 1)))
    num = np.atleast_1d(np.squeeze(num))
    return np.concatenate([np.zeros(len(den) - len(num)), num]), den


def response(num: np.ndarray, den: np.ndarray, w: np.ndarray) -> np.ndarray:
    """|num(e^{jw}) / den(e^{jw})|."""
    z = np.exp(1j * np.asarray(w, dtype=float))
    return np.abs(np.polyval(num, z) / np.polyval(den, z))


def exceeds(num: np.ndarray, den: np.ndarray, gamma: float, tol: float) -> bool:
    """Exact test of sup_w |H(e^{jw})| > gamma for a real rational H = num / den (same length m + 1) without poles
    on the unit circle: |H| = gamma on the circle iff p(z) = num(z) rev(num)(z) - gamma^2 den(z) rev(den)(z) = 0
    (p(e^{jw}) = e^{jmw} (|num|^2 - gamma^2 |den|^2)), so the crossing frequencies are p's roots with |1 - |r|| <= tol
    (angles in [0, pi]); |H| - gamma keeps its sign between consecutive crossings, and one evaluation at each
    midpoint (and at 0 and pi) decides."""
    p = np.polysub(np.polymul(num, num[::-1]), gamma ** 2 * np.polymul(den, den[::-1]))
    p = np.trim_zeros(p, "f")
    r = np.roots(p) if len(p) > 1 else np.array([])
    w = np.sort(np.abs(np.angle(r[np.abs(np.abs(r) - 1.0) <= tol]))) if len(r) else np.array([])
    cuts = np.concatenate([[0.0], w, [np.pi]])
    probes = np.concatenate([cuts, (cuts[:-1] + cuts[1:]) / 2])
    return bool((response(num, den, probes) > gamma).any())


def hinf(num: np.ndarray, den: np.ndarray, grid: int, tol: float) -> dict[str, float | bool]:
    """sup_w |H(e^{jw})| over [0, pi]: the max of a declared uniform grid of ``grid`` points, refined by a bounded
    scalar search between the argmax's neighbours, and certified by ``exceeds``: ``certified`` is True when no
    frequency exceeds the refined peak by more than 1e-9 relative."""
    w = np.linspace(0.0, np.pi, grid)
    mag = response(num, den, w)
    k = int(mag.argmax())
    lo, hi = w[max(k - 1, 0)], w[min(k + 1, grid - 1)]
    res = optimize.minimize_scalar(lambda x: -response(num, den, [x])[0], bounds=(lo, hi), method="bounded",
                                   options={"xatol": 1e-12})
    peak, at = (float(-res.fun), float(res.x)) if -res.fun > mag[k] else (float(mag[k]), float(w[k]))
    return {"peak": peak, "w": at, "certified": not exceeds(num, den, peak * (1 + 1e-9), tol)}


def constant_acceleration_states(pl: Platoon, policy, a: float) -> np.ndarray:
    """[N, 2] constant relative states of the chain behind a leader at constant acceleration a (w = 0): v~_i = -h_i a
    and s~_i the root of a_i(s~, v~_i) = a (``model.relative_accel``, residual included; Brent's method on a bracket
    widened from the linear law's root until it changes sign). From the kinematics (``model.relative_step``) such a
    state is fixed iff u_i = u_p = a and v~ = -h_i a; it depends only on the own law and a."""
    out = np.zeros((pl.n, 2))
    for i in range(pl.n):
        g, h = relative_gain(pl, [i])[0], float(headway(pl, [i])[0])
        v = -h * a

        def f(s: float) -> float:
            with torch.no_grad():
                return float(relative_accel(pl, np.array([i]), torch.tensor([[s, v]], dtype=torch.float64),
                                            policy)[0]) - a
        s0, r = (a - g[1] * v) / g[0], abs(a) + abs(v) + 1e-12
        while f(s0 - r) * f(s0 + r) > 0:
            r *= 2.0
        out[i] = [optimize.brentq(f, s0 - r, s0 + r, xtol=1e-15, rtol=4 * np.finfo(float).eps), v]
    return out


def equilibrium_residual(pl: Platoon, policy, x: np.ndarray, a: float) -> float:
    """max |f_i(x_i, x_i, x_{i-1}, w = 0, w_p) - x_i| over the chain (w_p = a for follower 1: the leader's acceleration;
    0 otherwise): how exactly ``constant_acceleration_states`` is a fixed point of ``model.relative_step``."""
    idx = np.arange(pl.n)
    xt = torch.as_tensor(x)
    xpd = torch.cat([torch.zeros(1, 2, dtype=torch.float64), xt[:-1]])
    w = torch.zeros(pl.n, 2, dtype=torch.float64)
    w[0, 1] = a
    with torch.no_grad():
        return float((relative_step(pl, idx, xt, xt, xpd, w, policy) - xt).abs().max())


def dc_cycles(pl: Platoon, x: np.ndarray, rho: float, collinear_tol: float) -> list[dict]:
    """Every pair j < i of followers of the same type whose constant-acceleration states are collinear,
    |x_i - lambda x_j| <= collinear_tol |x_j| with lambda = <x_i, x_j> / |x_j|^2 >= 0: (j, i, lambda, rho^{i-j})."""
    out = []
    for i in range(pl.n):
        for j in range(i):
            if pl.is_cav[i] != pl.is_cav[j]:
                continue
            lam = float(x[i] @ x[j] / (x[j] @ x[j]))
            if lam >= 0 and np.linalg.norm(x[i] - lam * x[j]) <= collinear_tol * np.linalg.norm(x[j]):
                out.append({"j": j, "i": i, "gain": lam, "bound": rho ** (i - j)})
    return out


def cascade_analysis(pl: Platoon, policy, rho: float, grid: int, collinear_tol: float, root_tol: float) -> dict:
    """Per follower: r_i, its bound rho^{1 / (2 tau + 1)}, sup |H_i| (and where); per consecutive pair (i-1, i): the
    alternating platoon's loop sup |H_{i-1} H_i|; the DC cycles of both signs of a = w_bar (the residual is
    positively homogeneous, not odd), the smallest N at which a cycle breaks (b), and the fixed-point residual."""
    tfs = [accel_transfer(pl, i) for i in range(pl.n)]
    gains = [hinf(*tf, grid, root_tol) for tf in tfs]
    loops = []
    for i in range(1, pl.n):
        num = np.polymul(tfs[i - 1][0], tfs[i][0])
        den = np.polymul(tfs[i - 1][1], tfs[i][1])
        loops.append({"pair": [i - 1, i], "types": ["CAV" if pl.is_cav[k] else "HDV" for k in (i - 1, i)],
                      **hinf(num, den, grid, root_tol)})
    cycles, residual = [], 0.0
    for a in (pl.w_bound, -pl.w_bound):
        x = constant_acceleration_states(pl, policy, a)
        residual = max(residual, equilibrium_residual(pl, policy, x, a))
        cycles += [c | {"a": a} for c in dc_cycles(pl, x, rho, collinear_tol)]
    broken = [c for c in cycles if c["gain"] > c["bound"]]
    radius = [spectral_radius(pl, i) for i in range(pl.n)]
    return {"spectral_radius": radius, "radius_bound": rho ** (1.0 / (2 * pl.tau + 1)),
            "accel_hinf": [g["peak"] for g in gains], "accel_hinf_w": [g["w"] for g in gains],
            "accel_hinf_certified": all(g["certified"] for g in gains), "loops": loops,
            "dc_cycles": cycles, "dc_broken": broken,
            "first_n_broken": min((c["i"] + 1 for c in broken), default=None),
            "equilibrium_residual": residual, "is_cav": pl.is_cav.tolist()}
