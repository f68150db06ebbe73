"""The networks' vector certificate: one shared polyhedral ``lyapunov.Cert`` V, a shared comparison row
(c_s, c_n) = rho softmax(logits) and an ISS gain gamma, and the decrease function of subsystem i (torch and compiled).

Verified condition, per subsystem i (compositional), on the query z = (x, eps, s, w):

    (N)  V(x^+) <= max( c_s max(V(x), V(x^d)) + c_n |s| / (G_i kappa) + gamma |w| ,  rho c_0 )

for all x, x^d with V(x), V(x^d) <= c_0, |s| <= G_i kappa c_0, |w| <= w_bar, where the delayed state is
x^d = D_ij x + eps with |eps| <= eps_ij on every piece j = 0 .. tau of the reachability-constrained delay domain
(domain.py: eps_ij bounds x^d - D_ij x exactly over the histories behind x(k) in the level set, piece j = min(k, tau)
at the k-th step after a constant pre-history, the steps k < 4 tau whose window reaches into the pre-history
included), or x^d anywhere in the level set on the full delay domain (the baseline). Here kappa = max {|k . y| : V(y) <= 1} (exact MILP, certify.py), so every
neighbour state with V <= c_0 gives |k . x_j| <= kappa V(x_j) and, with a_ij = c_n g_ij / G_i,
c_n |s_i| / (G_i kappa) <= sum_j a_ij V(x_j^(d)). Hence (N) implies the issue's vector Lyapunov-Razumikhin
condition with the comparison row (1 - a_ii, a_ij) = (c_s, c_n g_ij / G_i), whose infinity norm is
c_s + c_n = rho < 1 for every N. The argument of ``paperdag.papers.vector_lyapunov.platoon`` (scaling by the window
maximum, all maps positively homogeneous) then gives sISS with N-independent constants, with the network's window
M(k) = max_i max_{theta in [0, 4 tau]} V(x_i(k - theta)) (the history behind eps reaches back 4 tau steps,
domain.py): without disturbance M(k) <= rho^floor(k / (4 tau + 1)) M(0), for every solution whose history is
constant before time 0 (or itself a closed-loop solution) and starts in the level set.
"""

from __future__ import annotations

import numpy as np
import torch

from ..lyapunov import Cert
from ..params import NetworkCertificateParams
from ..verifier.graph import Builder, MaskedNet, Sym
from .domain import delay_matrices, delay_matrix
from .model import Network, subsystem_step

NQ_DIM = 6  # x(2) eps(2) s(1) w(1)


class NetworkCert(torch.nn.Module):
    """Shared certificate V, comparison row (c_s, c_n) = rho softmax(logits) and ISS gain gamma."""

    def __init__(self, box: tuple[float, float], arch: NetworkCertificateParams):
        super().__init__()
        self.V = Cert(list(box), 0, arch.feat, arch.eps)
        self.logits = torch.nn.Parameter(torch.tensor([2.0, 0.0], dtype=torch.float64))
        self.log_gamma = torch.nn.Parameter(torch.zeros((), dtype=torch.float64))
        self.rho = arch.rho

    def row(self) -> torch.Tensor:
        return self.rho * torch.softmax(self.logits, -1)

    def gamma(self) -> torch.Tensor:
        return torch.exp(self.log_gamma)


def split_network_query(net: Network, idx: np.ndarray, hist: np.ndarray | None, z: torch.Tensor):
    """z = (x, eps, s, w) -> (x, x^d, s, w) with x^d = D_ij x + eps (pieces ``hist`` [B], None: full domain)."""
    D = torch.as_tensor(delay_matrices(net, idx, hist), dtype=z.dtype)
    x = z[..., 0:2]
    return x, (D @ x[..., None]).squeeze(-1) + z[..., 2:4], z[..., 4], z[..., 5]


def network_decrease(nc: NetworkCert, net: Network, idx: np.ndarray, hist: np.ndarray | None, z: torch.Tensor,
                     c_0: float, kappa: float):
    """(G_i(z), V(x), V(x^d)) for queries z = (x, eps, s, w) [B, 6] of subsystems idx [B] on pieces hist [B] of the
    reachability-constrained domain (None: the full delay domain) (torch, differentiable):

        G_i(z) = V(x^+) - max(c_s max(V(x), V(x^d)) + c_n |s| / (G_i kappa) + gamma |w|, rho c_0)."""
    x, xd, s, w = split_network_query(net, idx, hist, z)
    c_s, c_n = nc.row()
    vx, vxd = nc.V(x), nc.V(xd)
    G_i = torch.as_tensor(net.gain.sum(1)[idx], dtype=z.dtype)
    R = c_s * torch.maximum(vx, vxd) + c_n * s.abs() / (G_i * kappa) + nc.gamma() * w.abs()
    return nc.V(subsystem_step(net, idx, x, xd, s, w)) - torch.clamp(R, min=nc.rho * c_0), vx, vxd


def compile_network_query(nc: NetworkCert, net: Network, i: int, j: int | None, c_0: float,
                          kappa: float) -> MaskedNet:
    """Masked ReLU net z [6] -> (G_i, V(x), V(x^d)) for subsystem i on piece j (None: full delay domain)."""
    b = Builder(NQ_DIM)
    x, s, w = b.input([0, 1]), b.input([4]), b.input([5])
    xd = b.add(b.linear(x, delay_matrix(net, i, j)), b.input([2, 3]))
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
