"""Linear delayed networks of 2-state subsystems on a ring: drone formation and a droop-controlled microgrid.

Subsystem i has state x_i = (q_i, v_i) (formation / angle error, velocity / frequency deviation) and, in discrete
time (Euler, step dt) with delay tau steps,

    q_i(k+1) = q_i + dt v_i
    v_i(k+1) = v_i + dt (a0_i q_i + a1_i q_i^d + b1_i v_i^d + s_i + w_i),     s_i = sum_{j in N_i} g_ij k . x_j^(d)

(^d: tau steps old). The neighbours enter only through the scalar channel s_i; it reads delayed neighbour states
when it is a communicated control term (drones) and current ones when it is physics (microgrid power flow).

* Drone formation (double integrators on a ring, one axis): u_i = -kp_i q_i^d - kv_i v_i^d
  + kc sum_j ((q_j^d - q_i^d) + (v_j^d - v_i^d)), i.e. a0 = 0, a1 = -(kp_i + deg kc), b1 = -(kv_i + deg kc),
  k = (1, 1), g_ij = kc, delayed channel.
* Droop-controlled microgrid (linearised swing equation of inverters on a ring, each tied to a local stiff
  load/grid with susceptance b0): M_i dw_i/dt = -D_i w_i^d - b0 d_i - b sum_j (d_i - d_j) + P_i, i.e.
  a0 = -(b0 + deg b) / M_i, a1 = 0, b1 = -D_i / M_i, k = (1, 0), g_ij = b / M_i, current channel; the droop acts on
  a frequency measurement tau steps old.

Per-subsystem gains are drawn from the ranges in params.yaml (heterogeneous), so every subsystem has its own
verification query. The vector certificate and its condition are in certificate.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from paperdag.io import to_jsonable

from ..params import DelayParams, NetworkParams

SYSTEMS = ("drones", "microgrid")


@dataclass(frozen=True)
class Network:
    """N subsystems on a ring; per-subsystem a0, a1, b1 and coupling weights gain[i, j]."""

    system: str
    a0: np.ndarray
    a1: np.ndarray
    b1: np.ndarray
    gain: np.ndarray
    channel: tuple[float, float]
    channel_delayed: bool
    dt: float
    tau: int
    box: tuple[float, float]
    w_bound: float

    @property
    def n(self) -> int:
        return len(self.a0)

    def coupling(self, i: int) -> float:
        """G_i = sum_j g_ij."""
        return float(self.gain[i].sum())

    def to_json(self) -> dict[str, Any]:
        """JSON-ready fields (arrays as lists); ``from_json`` restores them."""
        return to_jsonable(self.__dict__)

    @staticmethod
    def from_json(d: dict[str, Any]) -> Network:
        d = dict(d)
        for k in ("a0", "a1", "b1", "gain"):
            d[k] = np.asarray(d[k], dtype=np.float64)
        d["box"], d["channel"] = tuple(d["box"]), tuple(d["channel"])
        return Network(**d)


def ring(n: int) -> list[list[int]]:
    """Neighbours of each node of a ring of n nodes (n = 2: one neighbour each)."""
    return [sorted({(i - 1) % n, (i + 1) % n} - {i}) for i in range(n)]


def degrees(n: int) -> np.ndarray:
    """[N] the ring's node degrees (2, or 1 at n = 2)."""
    return np.array([len(x) for x in ring(n)], dtype=np.float64)


def ring_size(tau: int, n_grid: list[int], delays: DelayParams) -> int:
    """The ring a delay's certificate is trained and verified on: the largest for the first delay, else tau_n (the
    first N subsystems of the largest ring have exactly the queries of the ring of N >= 3: every node has degree 2
    and subsystem i's query depends only on its own parameters and degree)."""
    return max(n_grid) if tau == delays.taus[0] else delays.tau_n


def make_network(p: NetworkParams, dt: float, system: str, n: int, tau: int,
                 draws: dict[str, list[float] | np.ndarray]) -> Network:
    """The ring of the first n subsystems of ``draws`` (per-node parameters drawn once for the largest N)."""
    draws = {k: np.asarray(v)[:n] for k, v in draws.items()}
    a0, a1, b1 = coefficients(p, system, draws, degrees(n))
    gain = np.zeros((n, n))
    for i, js in enumerate(ring(n)):
        gain[i, js] = p.drone_kc if system == "drones" else p.grid_b / draws["inertia"][i]
    if system == "drones":
        channel, delayed, box = (1.0, 1.0), True, tuple(p.drone_box)
    else:
        channel, delayed, box = (1.0, 0.0), False, tuple(p.grid_box)
    return Network(system, a0, a1, b1, gain, channel, delayed, dt, tau, box, p.w_bound)


def coefficients(p: NetworkParams, system: str, draws: Mapping[str, Any], deg: Any) -> tuple[Any, Any, Any]:
    """(a0, a1, b1) [N] of the subsystems from their parameters ``draws`` and ring degrees ``deg`` (numpy arrays or
    torch tensors alike: the control study differentiates through them): drones a0 = 0, a1 = -(kp + deg kc),
    b1 = -(kv + deg kc); microgrid a0 = -(b0 + deg b) / M, a1 = 0, b1 = -D / M."""
    if system == "drones":
        kp, kv = draws["kp"], draws["kv"]
        return 0 * kp, -(kp + deg * p.drone_kc), -(kv + deg * p.drone_kc)
    if system == "microgrid":
        m = draws["inertia"]
        return -(p.grid_b0 + deg * p.grid_b) / m, 0 * m, -draws["damping"] / m
    raise ValueError(f"unknown network system {system!r}")


def draw_parameters(p: NetworkParams, system: str, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Heterogeneous per-node parameters for up to n nodes, uniform on their ranges."""
    if system == "drones":
        return {"kp": rng.uniform(*p.drone_kp_range, size=n), "kv": rng.uniform(*p.drone_kv_range, size=n)}
    return {"inertia": rng.uniform(*p.grid_inertia_range, size=n),
            "damping": rng.uniform(*p.grid_damping_range, size=n)}


def draw_networks(p: NetworkParams, rng: np.random.Generator) -> dict[str, dict[str, list[float]]]:
    """Per-node parameters of both network systems for max(n_grid) nodes (JSON-ready)."""
    n = max(p.n_grid)
    return {s: {k: v.tolist() for k, v in draw_parameters(p, s, n, rng).items()} for s in SYSTEMS}


def step_network(net: Network, X: torch.Tensor, Xd: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """X(k+1) [..., N, 2] of the whole network from X(k), X(k - tau) and w(k) [..., N]."""
    k = torch.tensor(net.channel, dtype=X.dtype)
    src = Xd if net.channel_delayed else X
    s = (src @ k) @ torch.as_tensor(net.gain, dtype=X.dtype).T
    a0, a1, b1 = (torch.as_tensor(a, dtype=X.dtype) for a in (net.a0, net.a1, net.b1))
    dv = a0 * X[..., 0] + a1 * Xd[..., 0] + b1 * Xd[..., 1] + s + w
    return torch.stack([X[..., 0] + net.dt * X[..., 1], X[..., 1] + net.dt * dv], -1)


def simulate_network(net: Network, x0: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Trajectory [T + 1, N, 2] from a constant pre-history x0 [N, 2] under disturbances w [T, N]."""
    hist = [x0.clone() for _ in range(net.tau + 1)]
    traj = [x0.clone()]
    for k in range(w.shape[0]):
        hist.append(step_network(net, hist[-1], hist[0], w[k]))
        hist.pop(0)
        traj.append(hist[-1])
    return torch.stack(traj)


def subsystem_step(net: Network, idx: np.ndarray, x, xd, s, w):
    """x_i(k+1) for a batch of queries of subsystems idx [B] (torch)."""
    a0, a1, b1 = (torch.as_tensor(a[idx], dtype=x.dtype) for a in (net.a0, net.a1, net.b1))
    dv = a0 * x[..., 0] + a1 * xd[..., 0] + b1 * xd[..., 1] + s + w
    return torch.stack([x[..., 0] + net.dt * x[..., 1], x[..., 1] + net.dt * dv], -1)
