"""Mixed-autonomy platoon in error coordinates, discrete time (Euler, step dt), delay tau steps.

Follower i (i = 1..N) tracks its predecessor i-1 (vehicle 0 is the leader, cruising at v*). With spacing error
``e_s = s_i - s*`` and velocity error ``e_v = v_i - v*`` (state ``x_i = (e_s, e_v)``):

    e_s(k+1) = e_s(k) + dt (e_v,i-1(k) - e_v,i(k))
    e_v(k+1) = e_v(k) + dt (u_i(k) + w_i(k)),     |w_i| <= w_bound

and every vehicle acts on tau-step-old measurements (human reaction / V2V communication delay):

    HDV (optimal-velocity model): u = alpha_i (V(s* + e_s^d) - v* - e_v^d) + beta_i (e_v,i-1^d - e_v^d)
    CAV: u = k_s e_s^d + k_v (e_v,i-1^d - e_v^d) - k_d e_v^d + pi_theta(s~^d / S, v~^d / E)

with the relative errors s~ = e_s - h_i e_v,i-1, v~ = e_v - e_v,i-1 (``relative``; h_i the equilibrium headway). The
certificates act on the relative errors, whose step ``relative_step`` is (the platoon package's docstring).

with the piecewise-linear optimal velocity ``V(s) = clip(kappa (s - s_st), 0, v_max)``, ``kappa = v_max /
(s_go - s_st)`` and equilibrium spacing ``s* = s_st + v*/kappa``. On the state box ``|e_s| <= S`` the clip is
inactive whenever ``s_st <= s* - S`` and ``s* + S <= s_go`` (checked by ``Platoon.ovm_linear_on_box``), so there
the HDV law is the linear ``alpha (kappa e_s^d - e_v^d) + beta (...)``: this is the map the verifier compiles,
while simulations use the clipped law (params.py rejects a box on which the clip is active). HDV gains are
heterogeneous, drawn uniformly from the configured ranges.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from paperdag.io import to_jsonable

from ..params import PlatoonParams


@dataclass(frozen=True)
class Platoon:
    """N followers; ``is_cav[i]``, HDV gains ``alpha[i], beta[i]``; shared physics and domain."""

    is_cav: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    dt: float
    tau: int
    kappa: float
    v_star: float
    v_max: float
    s_st: float
    box: tuple[float, float]
    w_bound: float
    gains: tuple[float, float, float]

    @property
    def n(self) -> int:
        return len(self.is_cav)

    @property
    def s_star(self) -> float:
        return self.s_st + self.v_star / self.kappa

    def ovm_linear_on_box(self) -> bool:
        """The clip of V(s) is inactive for all spacing errors in [-S, S]."""
        lo = self.kappa * (self.s_star - self.box[0] - self.s_st)
        hi = self.kappa * (self.s_star + self.box[0] - self.s_st)
        return bool(lo >= 0.0 and hi <= self.v_max)

    def first(self, n: int) -> Platoon:
        """The platoon of the first n followers."""
        return Platoon(self.is_cav[:n], self.alpha[:n], self.beta[:n], self.dt, self.tau, self.kappa, self.v_star,
                       self.v_max, self.s_st, self.box, self.w_bound, self.gains)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready fields (arrays as lists); ``from_json`` restores them."""
        return to_jsonable(self.__dict__)

    @staticmethod
    def from_json(d: dict[str, Any]) -> Platoon:
        d = dict(d)
        for k in ("is_cav", "alpha", "beta"):
            d[k] = np.asarray(d[k], dtype=bool if k == "is_cav" else np.float64)
        d["box"], d["gains"] = tuple(d["box"]), tuple(d["gains"])
        return Platoon(**d)


def make_platoon(p: PlatoonParams, dt: float, n: int, rng: np.random.Generator) -> Platoon:
    """Draw a platoon of n followers: vehicle i (1-based) is a CAV iff i % cav_period == 0, HDV gains
    alpha_i ~ U(alpha_range), beta_i ~ U(beta_range)."""
    idx = np.arange(1, n + 1)
    return Platoon(
        is_cav=(idx % p.cav_period == 0),
        alpha=rng.uniform(*p.alpha_range, size=n),
        beta=rng.uniform(*p.beta_range, size=n),
        dt=dt, tau=p.tau, kappa=p.v_max / (p.s_go - p.s_st), v_star=p.v_star,
        v_max=p.v_max, s_st=p.s_st, box=(p.s_bound, p.v_bound), w_bound=p.w_bound,
        gains=tuple(p.cav_gains),
    )


def hdv_accel(pl: Platoon, idx, xd: torch.Tensor, vpd: torch.Tensor, clip: bool) -> torch.Tensor:
    """OVM acceleration of HDVs ``idx`` (0-based, broadcast against the batch) from delayed own state xd [..., 2]
    and delayed predecessor velocity error vpd [...]."""
    alpha = torch.as_tensor(pl.alpha[idx], dtype=xd.dtype)
    beta = torch.as_tensor(pl.beta[idx], dtype=xd.dtype)
    if clip:
        v_opt = torch.clamp(pl.kappa * (pl.s_star + xd[..., 0] - pl.s_st), 0.0, pl.v_max) - pl.v_star
    else:
        v_opt = pl.kappa * xd[..., 0]
    return alpha * (v_opt - xd[..., 1]) + beta * (vpd - xd[..., 1])


def cav_nominal(pl: Platoon, xd: torch.Tensor, vpd: torch.Tensor) -> torch.Tensor:
    """Nominal linear CAV law k_s e_s^d + k_v (e_vp^d - e_v^d) - k_d e_v^d."""
    ks, kv, kd = pl.gains
    return ks * xd[..., 0] + kv * (vpd - xd[..., 1]) - kd * xd[..., 1]


def headway(pl: Platoon, idx) -> np.ndarray:
    """h_i of followers ``idx``: the spacing error of follower i's equilibrium behind a predecessor cruising at a
    constant velocity error c is h_i c (HDV: V(s* + h c) = v* + c, h = 1 / kappa; CAV: the nominal law's
    k_s e_s - k_d c = 0, h = k_d / k_s)."""
    ks, _, kd = pl.gains
    return np.where(pl.is_cav[idx], kd / ks, 1.0 / pl.kappa)


def relative(pl: Platoon, idx, x: torch.Tensor, vp: torch.Tensor) -> torch.Tensor:
    """Relative errors of followers ``idx``: (s~, v~) = (e_s - h_i e_vp, e_v - e_vp), the spacing error at the
    predecessor's speed and the relative speed; every constant-speed state of the chain is s~ = v~ = 0."""
    h = torch.as_tensor(headway(pl, idx), dtype=x.dtype)
    return torch.stack([x[..., 0] - h * vp, x[..., 1] - vp], -1)


def policy_input(pl: Platoon, xr: torch.Tensor) -> torch.Tensor:
    """Normalised controller input (s~^d / S, v~^d / E) of the delayed relative errors xr [..., 2]."""
    return xr / torch.tensor(pl.box, dtype=xr.dtype)


def accel(pl: Platoon, idx, xd: torch.Tensor, vpd: torch.Tensor, policy, clip: bool = False) -> torch.Tensor:
    """Acceleration command of followers ``idx`` from absolute delayed errors; ``policy`` maps the normalised
    relative input (``policy_input`` of ``relative``) to a residual (or None)."""
    u = cav_nominal(pl, xd, vpd)
    if policy is not None:
        u = u + policy(policy_input(pl, relative(pl, idx, xd, vpd))).squeeze(-1)
    cav = torch.as_tensor(pl.is_cav[idx])
    return torch.where(cav, u, hdv_accel(pl, idx, xd, vpd, clip))


def relative_gain(pl: Platoon, idx) -> np.ndarray:
    """[len(idx), 2] gains of the unclipped laws in relative errors, u_i = g_i . (s~^d, v~^d) (+ the CAV residual):
    HDV alpha (kappa e_s - e_v) + beta (e_vp - e_v) = alpha kappa s~ - (alpha + beta) v~ (h = 1 / kappa);
    CAV k_s e_s + k_v (e_vp - e_v) - k_d e_v = k_s s~ - (k_v + k_d) v~ (h = k_d / k_s)."""
    idx = np.asarray(idx)
    ks, kv, kd = pl.gains
    hdv = np.stack([pl.alpha[idx] * pl.kappa, -(pl.alpha[idx] + pl.beta[idx])], -1)
    return np.where(pl.is_cav[idx][:, None], np.array([ks, -(kv + kd)]), hdv)


def relative_accel(pl: Platoon, idx, xrd: torch.Tensor, policy) -> torch.Tensor:
    """u_i = g_i . xr_i^d + [CAV] pi(xr_i^d / (S, E)) of followers ``idx`` from delayed relative errors xrd."""
    idx = np.asarray(idx)
    u = (torch.as_tensor(relative_gain(pl, idx), dtype=xrd.dtype) * xrd).sum(-1)
    if policy is not None:
        u = u + torch.as_tensor(pl.is_cav[idx], dtype=xrd.dtype) * policy(policy_input(pl, xrd)).squeeze(-1)
    return u


def relative_step(pl: Platoon, idx, x: torch.Tensor, xd: torch.Tensor, xpd: torch.Tensor, w: torch.Tensor,
                  policy) -> torch.Tensor:
    """xr_i(k+1) of followers ``idx`` (0-based) from xr_i(k), xr_i(k - tau), xr_{i-1}(k - tau), w = (w_i, w_{i-1})
    [..., 2] (unclipped OVM). With u_p = a_{i-1}(xr_{i-1}^d) (0 for the leader, whose acceleration enters as w_p):

        s~(k+1) = s~ - dt v~ - h_i dt (u_p + w_p),     v~(k+1) = v~ + dt (u_i + w_i - u_p - w_p)

    (from e_s(k+1) = e_s + dt (e_vp - e_v) and e_v(k+1) = e_v + dt (u + w) of both vehicles)."""
    idx = np.asarray(idx)
    lead = torch.as_tensor(idx == 0)
    up = torch.where(lead, torch.zeros((), dtype=x.dtype), relative_accel(pl, np.maximum(idx - 1, 0), xpd, policy))
    ui = relative_accel(pl, idx, xd, policy)
    h = torch.as_tensor(headway(pl, idx), dtype=x.dtype)
    a_p = up + w[..., 1]
    return torch.stack([x[..., 0] - pl.dt * x[..., 1] - h * pl.dt * a_p,
                        x[..., 1] + pl.dt * (ui + w[..., 0] - a_p)], -1)


def step(pl: Platoon, idx, x, xd, xp, xpd, w, policy, clip: bool = False) -> torch.Tensor:
    """Absolute errors x_i(k+1) from x_i(k), x_i(k-tau), x_{i-1}(k), x_{i-1}(k-tau), w_i(k) for followers ``idx``."""
    u = accel(pl, idx, xd, xpd[..., 1], policy, clip)
    return torch.stack([x[..., 0] + pl.dt * (xp[..., 1] - x[..., 1]), x[..., 1] + pl.dt * (u + w)], -1)


def simulate(pl: Platoon, x0: torch.Tensor, w: torch.Tensor, lead_v: torch.Tensor, policy,
             clip: bool = True) -> torch.Tensor:
    """Roll the whole platoon out: x0 [N, 2] (constant pre-history), w [T, N], lead_v [T] leader velocity error
    (constant pre-history). Returns the trajectory [T + 1, N, 2]."""
    T, tau = w.shape[0], pl.tau
    idx = np.arange(pl.n)
    lead = torch.cat([lead_v[:1].expand(tau), lead_v])
    hist = [x0.clone() for _ in range(tau + 1)]  # hist[-1] = x(k), hist[0] = x(k - tau)
    traj = [x0.clone()]
    for k in range(T):
        x, xd = hist[-1], hist[0]
        xp = torch.cat([torch.stack([torch.zeros_like(lead[0]), lead[k + tau]])[None], x[:-1]])
        xpd = torch.cat([torch.stack([torch.zeros_like(lead[0]), lead[k]])[None], xd[:-1]])
        hist.append(step(pl, idx, x, xd, xp, xpd, w[k], policy, clip))
        hist.pop(0)
        traj.append(hist[-1])
    return torch.stack(traj)
