"""The platoon's vector certificate, the comparison matrix, and the per-follower decrease function (torch and
compiled).

Certificate: one ``lyapunov.Cert`` V per vehicle type (HDV, CAV) on y = x / (S, E), shared by identical followers.

Comparison matrix rows (one per (own type, predecessor type) pair, predecessor in {leader, HDV, CAV}):
    (c_ii, c_ij) = rho * softmax(logits),   so c_ii, c_ij >= 0 and c_ii + c_ij = rho < 1
(rows of followers of the leader, whose predecessor term vanishes, are (rho, 0)),
i.e. c_ii = 1 - a_ii and c_ij = a_ij in the issue's notation, ||I - diag(a_ii) + offdiag(a_ij)||_inf <= rho.

Decrease function of follower i at window level c_0, on the query z = (x, delta, x_p, delta_p, w, w_p) of relative
errors (``model.relative``), x^d = x + delta, f_i = ``model.relative_step`` (x_p enters only the level and R):
    R_i(z) = c_ii max(V_i(x), V_i(x^d)) + c_ij max(V_p(x_p), V_p(x_p^d)) + gamma_i (|w| + |w_p|)
    G_i(z) = V_i(f_i(x, x^d, x_p^d, w, w_p)) - max(R_i(z), rho c_0)
    level_i(z) = max(V_i(x), V_i(x^d), V_p(x_p), V_p(x_p^d))
(the verified property is G_i <= 0 where level_i <= c_0; see the docstring of this subpackage for why).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..lyapunov import Cert
from ..params import CertificateParams, PolicyParams
from ..verifier.graph import Builder, MaskedNet, Sym
from .model import Platoon, headway, relative_gain, relative_step

HDV, CAV = 0, 1
LEADER_PRED = 0  # predecessor kinds: 0 leader, 1 HDV, 2 CAV
Q_DIM = 10  # x(2) delta(2) x_p(2) delta_p(2) w(1) w_p(1), all in relative errors (model.relative)


class Policy(nn.Module):
    """Bias-free residual controller pi(y) = u_scale * W3 relu(W2 relu(W1 y)), y = (s~^d / S, v~^d / E) the
    normalised delayed relative errors (``model.policy_input``)."""

    def __init__(self, hidden: int, u_scale: float):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, hidden, bias=False), nn.ReLU(), nn.Linear(hidden, hidden, bias=False),
                                 nn.ReLU(), nn.Linear(hidden, 1, bias=False)).double()
        self.u_scale = u_scale
        nn.init.zeros_(self.net[-1].weight)  # start at the nominal controller

    def forward(self, y: torch.Tensor) -> torch.Tensor:
        return self.u_scale * self.net(y)

    def weights(self) -> list[np.ndarray]:
        ws = [m.weight.detach().numpy() for m in self.net if isinstance(m, nn.Linear)]
        return ws[:-1] + [self.u_scale * ws[-1]]


class VectorCert(nn.Module):
    """Per-type certificates, comparison-matrix logits per (type, predecessor kind), ISS gains per type."""

    def __init__(self, box: tuple[float, float], hidden: int, feat: int, eps: float, rho: float):
        super().__init__()
        self.V = nn.ModuleList([Cert(list(box), hidden, feat, eps) for _ in (HDV, CAV)])
        self.logits = nn.Parameter(torch.tensor([[2.0, 0.0]] * 6, dtype=torch.float64))
        self.log_gamma = nn.Parameter(torch.zeros(2, dtype=torch.float64))
        self.rho = rho

    def rows(self) -> torch.Tensor:
        """[6, 2] rows (c_ii, c_ij) indexed by 3 * own_type + predecessor kind."""
        rows = self.rho * torch.softmax(self.logits, -1)
        leader = torch.tensor([3 * t + LEADER_PRED for t in (HDV, CAV)])
        return rows.index_put((leader,), torch.tensor([self.rho, 0.0], dtype=rows.dtype).expand(2, 2))

    def gamma(self) -> torch.Tensor:
        return torch.exp(self.log_gamma)


def build_models(cert: CertificateParams, policy: PolicyParams, box: tuple[float, float]) -> tuple[VectorCert, Policy]:
    """A fresh vector certificate and residual controller (in this order: both draw from torch's global RNG)."""
    vc = VectorCert(box, cert.hidden, cert.feat, cert.eps, cert.rho)
    return vc, Policy(policy.hidden, policy.u_scale)


def kinds(pl: Platoon) -> tuple[np.ndarray, np.ndarray]:
    """Own type (0 HDV / 1 CAV) and predecessor kind (0 leader / 1 HDV / 2 CAV) of every follower."""
    own = pl.is_cav.astype(int)
    pred = np.concatenate([[LEADER_PRED], own[:-1] + 1])
    return own, pred


def split_query(z: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """z -> (x, x^d, x_p, x_p^d, w), w = (w_i, w_p) [..., 2]."""
    x, xp = z[..., 0:2], z[..., 4:6]
    return x, x + z[..., 2:4], xp, xp + z[..., 6:8], z[..., 8:10]


def _v_of(vc: VectorCert, types: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return torch.where(types == CAV, vc.V[CAV](x), vc.V[HDV](x))


def decrease(vc: VectorCert, policy: Policy | None, pl: Platoon, idx: np.ndarray, z: torch.Tensor, c_0: float):
    """(G_i(z), level_i(z)) for a batch of queries z [B, 10] of followers idx [B] (torch, differentiable)."""
    own, pred = kinds(pl)
    t_own = torch.as_tensor(own[idx])
    t_pred = torch.as_tensor(np.maximum(pred[idx] - 1, CAV * (pred[idx] == LEADER_PRED)))  # leader uses V_CAV at 0
    x, xd, xp, xpd, w = split_query(z)
    nxt = relative_step(pl, idx, x, xd, xpd, w, policy)
    rows = vc.rows()[torch.as_tensor(3 * own[idx] + pred[idx])]
    own_max = torch.maximum(_v_of(vc, t_own, x), _v_of(vc, t_own, xd))
    pred_max = torch.maximum(_v_of(vc, t_pred, xp), _v_of(vc, t_pred, xpd))
    R = rows[:, 0] * own_max + rows[:, 1] * pred_max + vc.gamma()[t_own] * w.abs().sum(-1)
    G = _v_of(vc, t_own, nxt) - torch.clamp(R, min=vc.rho * c_0)
    return G, torch.maximum(own_max, pred_max)


def compile_step(b: Builder, pl: Platoon, i: int, x: Sym, xd: Sym, xpd: Sym, w: Sym, wp: Sym,
                 policy: list[np.ndarray] | None) -> Sym:
    """xr_i^+ as a Sym (``model.relative_step``): u_i = g_i . xr_i^d (+ the compiled residual policy for a CAV),
    u_p likewise for the predecessor (absent for the leader), s~^+ = s~ - dt v~ - h_i dt (u_p + w_p),
    v~^+ = v~ + dt (u_i + w_i - u_p - w_p)."""
    S, E = pl.box
    dt, h = pl.dt, float(headway(pl, [i])[0])

    def law(j: int, xr: Sym) -> Sym:
        u = b.linear(xr, relative_gain(pl, [j]))
        if pl.is_cav[j] and policy is not None:
            u = b.add(u, b.mlp(b.linear(xr, np.diag([1 / S, 1 / E])), policy))
        return u

    ui = law(i, xd)
    a_p = b.add(law(i - 1, xpd), wp) if i > 0 else wp  # the leader's acceleration enters as w_p
    es = b.add(b.linear(x, [[1.0, -dt]]), a_p, weights=(1.0, -h * dt))
    ev = b.add(b.linear(x, [[0.0, 1.0]]), ui, w, a_p, weights=(1.0, dt, dt, -dt))
    return b.cat(es, ev)


def _query_inputs(b: Builder) -> tuple[Sym, ...]:
    x, xp = b.input([0, 1]), b.input([4, 5])
    return x, b.add(x, b.input([2, 3])), xp, b.add(xp, b.input([6, 7])), b.input([8]), b.input([9])


def compile_increment(policy: Policy | None, pl: Platoon, i: int) -> MaskedNet:
    """Masked ReLU net z [10] -> xr_i^+ - xr_i (2) for follower i (0-based)."""
    b = Builder(Q_DIM)
    x, xd, _, xpd, w, wp = _query_inputs(b)
    nxt = compile_step(b, pl, i, x, xd, xpd, w, wp, policy.weights() if policy is not None else None)
    return b.build(b.add(nxt, x, weights=(1.0, -1.0)))


def compile_query(vc: VectorCert, policy: Policy | None, pl: Platoon, i: int, c_0: float) -> MaskedNet:
    """Masked ReLU net z [10] -> (G_i, level_i, V_i(x), V_i(x^d), V_p(x_p), V_p(x_p^d)) for follower i (0-based)
    at window level c_0."""
    own, pred = kinds(pl)
    Vi = vc.V[own[i]]
    Vp = vc.V[CAV if pred[i] == LEADER_PRED else pred[i] - 1]
    c_ii, c_ij = vc.rows()[3 * own[i] + pred[i]].detach().numpy()
    gamma = float(vc.gamma()[own[i]].detach())
    b = Builder(Q_DIM)
    x, xd, xp, xpd, w, wp = _query_inputs(b)
    nxt = compile_step(b, pl, i, x, xd, xpd, w, wp, policy.weights() if policy is not None else None)
    vs = [Vi.compile(b, x), Vi.compile(b, xd), Vp.compile(b, xp), Vp.compile(b, xpd)]
    own_max, pred_max = b.max2(vs[0], vs[1]), b.max2(vs[2], vs[3])
    R = b.add(own_max, pred_max, b.abs(w), b.abs(wp), weights=(c_ii, c_ij, gamma, gamma))
    G = b.add(Vi.compile(b, nxt), b.max2(R, b.linear(w, [[0.0]], vc.rho * c_0)), weights=(1.0, -1.0))
    return b.build(b.cat(G, b.max2(own_max, pred_max), *vs))
