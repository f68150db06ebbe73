"""Mixed-autonomy platoon in error coordinates, discrete time (Euler, step dt), delay tau steps.

Follower i (i = 1..N) tracks its predecessor i-1 (vehicle 0 is the leader, cruising at v*). With spacing error
``e_s = s_i - s*`` and velocity error ``e_v = v_i - v*`` (state ``x_i = (e_s, e_v)``):

    e_s(k+1) = e_s(k) + dt (e_v,i-1(k) - e_v,i(k))
    e_v(k+1) = e_v(k) + dt (u_i(k) + w_i(k)),     |w_i| <= w_bound

and every vehicle acts on tau-step-old measurements (human reaction / V2V communication delay):

    HDV (optimal-velocity model): u = alpha_i (V(s* + e_s^d) - v* - e_v^d) + beta_i (e_v,i-1^d - e_v^d)
    CAV: u = k_s e_s^d + k_v (e_v,i-1^d - e_v^d) - k_d e_v^d + pi_theta(e_s^d / S, e_v^d / E, e_v,i-1^d / E)

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


def policy_input(pl: Platoon, xd: torch.Tensor, vpd: torch.Tensor) -> torch.Tensor:
    """Normalised controller input (e_s^d / S, e_v^d / E, e_vp^d / E)."""
    S, E = pl.box
    return torch.stack([xd[..., 0] / S, xd[..., 1] / E, vpd / E], -1)


def accel(pl: Platoon, idx, xd: torch.Tensor, vpd: torch.Tensor, policy, clip: bool = False) -> torch.Tensor:
    """Acceleration command of followers ``idx``; ``policy`` maps the normalised input to a residual (or None)."""
    u = cav_nominal(pl, xd, vpd)
    if policy is not None:
        u = u + policy(policy_input(pl, xd, vpd)).squeeze(-1)
    cav = torch.as_tensor(pl.is_cav[idx])
    return torch.where(cav, u, hdv_accel(pl, idx, xd, vpd, clip))


def step(pl: Platoon, idx, x, xd, xp, xpd, w, policy, clip: bool = False) -> torch.Tensor:
    """x_i(k+1) from x_i(k), x_i(k-tau), x_{i-1}(k), x_{i-1}(k-tau), w_i(k) for followers ``idx``."""
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
