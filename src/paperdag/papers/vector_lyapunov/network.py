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
verification query. The vector certificate is one shared polyhedral ``Cert`` V and a shared comparison row
(c_s, c_n) = rho softmax(logits); see ``network_query`` for the verified condition.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from .certificate import Cert
from .graph import Builder, MaskedNet, Sym

NQ_DIM = 6  # x(2) delta(2) s(1) w(1)


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



def ring(n: int) -> list[list[int]]:
    """Neighbours of each node of a ring of n nodes (n = 2: one neighbour each)."""
    return [sorted({(i - 1) % n, (i + 1) % n} - {i}) for i in range(n)]


def make_network(p: dict, system: str, n: int, tau: int, draws: dict[str, np.ndarray]) -> Network:
    """The ring of the first n subsystems of ``draws`` (per-node parameters drawn once for the largest N)."""
    nbrs = ring(n)
    deg = np.array([len(x) for x in nbrs], dtype=np.float64)
    gain = np.zeros((n, n))
    if system == "drones":
        kc = p["drone_kc"]
        for i, js in enumerate(nbrs):
            gain[i, js] = kc
        a0, a1, b1 = np.zeros(n), -(draws["kp"][:n] + deg * kc), -(draws["kv"][:n] + deg * kc)
        channel, delayed, box = (1.0, 1.0), True, tuple(p["drone_box"])
    elif system == "microgrid":
        b0, b = p["grid_b0"], p["grid_b"]
        m = draws["inertia"][:n]
        for i, js in enumerate(nbrs):
            gain[i, js] = b / m[i]
        a0, a1, b1 = -(b0 + deg * b) / m, np.zeros(n), -draws["damping"][:n] / m
        channel, delayed, box = (1.0, 0.0), False, tuple(p["grid_box"])
    else:
        raise ValueError(f"unknown network system {system!r}")
    return Network(system, a0, a1, b1, gain, channel, delayed, p["dt"], tau, box, p["net_w_bound"])


def draw_parameters(p: dict, system: str, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Heterogeneous per-node parameters for up to n nodes."""
    if system == "drones":
        return {"kp": rng.uniform(*p["drone_kp_range"], size=n), "kv": rng.uniform(*p["drone_kv_range"], size=n)}
    return {"inertia": rng.uniform(*p["grid_inertia_range"], size=n),
            "damping": rng.uniform(*p["grid_damping_range"], size=n)}


def draw_networks(p: dict, rng: np.random.Generator) -> dict[str, dict[str, list[float]]]:
    """Per-node parameters of both network systems for max(net_n_grid) nodes (JSON-ready)."""
    n = max(p["net_n_grid"])
    return {s: {k: v.tolist() for k, v in draw_parameters(p, s, n, rng).items()} for s in ("drones", "microgrid")}


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


class NetworkCert(torch.nn.Module):
    """Shared certificate V, comparison row (c_s, c_n) = rho softmax(logits) and ISS gain gamma."""

    def __init__(self, box: tuple[float, float], feat: int, eps: float, rho: float):
        super().__init__()
        self.V = Cert(list(box), 0, feat, eps)
        self.logits = torch.nn.Parameter(torch.tensor([2.0, 0.0], dtype=torch.float64))
        self.log_gamma = torch.nn.Parameter(torch.zeros((), dtype=torch.float64))
        self.rho = rho

    def row(self) -> torch.Tensor:
        return self.rho * torch.softmax(self.logits, -1)

    def gamma(self) -> torch.Tensor:
        return torch.exp(self.log_gamma)


def subsystem_step(net: Network, idx: np.ndarray, x, xd, s, w):
    """x_i(k+1) for a batch of queries of subsystems idx [B] (torch)."""
    a0, a1, b1 = (torch.as_tensor(a[idx], dtype=x.dtype) for a in (net.a0, net.a1, net.b1))
    dv = a0 * x[..., 0] + a1 * xd[..., 0] + b1 * xd[..., 1] + s + w
    return torch.stack([x[..., 0] + net.dt * x[..., 1], x[..., 1] + net.dt * dv], -1)


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


def split_network_query(net: Network, idx: np.ndarray, z: torch.Tensor, reach: bool):
    """z = (x, eps, s, w) -> (x, x^d, s, w) with x^d = D_i x + eps."""
    D = torch.as_tensor(np.stack([delay_matrix(net, i, reach) for i in range(net.n)])[idx], dtype=z.dtype)
    x = z[..., 0:2]
    return x, (D @ x[..., None]).squeeze(-1) + z[..., 2:4], z[..., 4], z[..., 5]


def network_decrease(nc: NetworkCert, net: Network, idx: np.ndarray, z: torch.Tensor, c_0: float, kappa: float,
                     reach: bool = True):
    """(G_i(z), V(x), V(x^d)) for queries z = (x, eps, s, w) [B, 6] of subsystems idx [B] (torch, differentiable):

        G_i(z) = V(x^+) - max(c_s max(V(x), V(x^d)) + c_n |s| / (G_i kappa) + gamma |w|, rho c_0)."""
    x, xd, s, w = split_network_query(net, idx, z, reach)
    c_s, c_n = nc.row()
    vx, vxd = nc.V(x), nc.V(xd)
    G_i = torch.as_tensor(net.gain.sum(1)[idx], dtype=z.dtype)
    R = c_s * torch.maximum(vx, vxd) + c_n * s.abs() / (G_i * kappa) + nc.gamma() * w.abs()
    return nc.V(subsystem_step(net, idx, x, xd, s, w)) - torch.clamp(R, min=nc.rho * c_0), vx, vxd


def compile_network_query(nc: NetworkCert, net: Network, i: int, c_0: float, kappa: float,
                          reach: bool = True) -> MaskedNet:
    """Masked ReLU net z [6] -> (G_i, V(x), V(x^d)) for subsystem i."""
    b = Builder(NQ_DIM)
    x, s, w = b.input([0, 1]), b.input([4]), b.input([5])
    xd = b.add(b.linear(x, delay_matrix(net, i, reach)), b.input([2, 3]))
    dt = net.dt
    q_next = b.linear(x, [[1.0, dt]])
    v_next = b.add(b.linear(x, [[dt * net.a0[i], 1.0]]), b.linear(xd, [[dt * net.a1[i], dt * net.b1[i]]]), s, w,
                   weights=(1.0, 1.0, dt, dt))
    nxt: Sym = b.cat(q_next, v_next)
    c_s, c_n = (float(c) for c in nc.row().detach())
    vx, vxd = nc.V.compile(b, x), nc.V.compile(b, xd)
    R = b.add(b.max2(vx, vxd), b.abs(s), b.abs(w),
              weights=(c_s, c_n / (net.coupling(i) * kappa), float(nc.gamma().detach())))
    G = b.add(nc.V.compile(b, nxt), b.max2(R, b.linear(w, [[0.0]], nc.rho * c_0)), weights=(1.0, -1.0))
    return b.build(b.cat(G, vx, vxd))


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
