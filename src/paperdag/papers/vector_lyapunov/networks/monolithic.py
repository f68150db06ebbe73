"""Baseline: one monolithic scalar Lyapunov-Razumikhin certificate over the whole ring X = (x_1 .. x_N).

    (M)  V(X^+) <= max( rho max(V(X), V(X^d)) + gamma ||w||_1 ,  rho c_0 )

for X, X^d in {V <= c_0}, |w_i| <= w_bar, on every piece j = 0 .. tau of the same kind of delay domain as the
compositional certificate (domain.py): X^d_i = D_ij x_i + E_i, |E_i| <= eps_ij, one j for all subsystems (it is
the time since the start). The neighbour channels s_i are computed exactly inside X^+ (no kappa bound).
V(X) = ||W Y||_1 + eps ||Y||_1 (Y = X / box, W: N feat x 2N rows, the compositional capacity per subsystem),
initialised block diagonally with the compositional initialisation (``cegis.quadratic_init``), i.e. as
sum_i V_0(x_i), and trained with the same learner on sampled queries of its domain (the constants are recomputed
between rounds). Its constants are exact LPs (V is a polyhedral norm: verifier/lp.py): c_0 = min of V on the
boundary of B^N, and eps_ij, the bound of X^d - D X over the ring's closed-loop histories in its level set
(``domain.history_bound``, the compositional certificate's domain with the exact coupling; window 4 tau + 1). It is
verified by the same branch and bound + MILP as the compositional certificate, with N times its per-property budget
(the budget the compositional certificate has for its N subsystems), up to the first cell the budget leaves undecided.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from ..lyapunov import Cert, norm_rows
from ..params import BudgetParams, NetworkCegisParams, NetworkCertificateParams
from ..runtime import Log
from ..verifier import bab, lp
from ..verifier.graph import Builder, MaskedNet, Sym
from .certificate import NetworkCert
from .cegis import quadratic_init
from .domain import delay_matrix, history_bound, piece_histories, piece_starts, subsystem_loop
from .model import Network

WORK = ("cells", "milps", "milp_nodes", "lp_iterations", "bounds")


class MonoNetCert(torch.nn.Module):
    """V on R^{2N} (polyhedral norm, ``feat`` rows per subsystem) and an ISS gain gamma."""

    def __init__(self, net: Network, arch: NetworkCertificateParams):
        super().__init__()
        self.V = Cert(list(net.box) * net.n, 0, arch.feat * net.n, arch.eps)
        self.log_gamma = torch.nn.Parameter(torch.zeros((), dtype=torch.float64))
        self.rho = arch.rho
        self.n = net.n

    def gamma(self) -> torch.Tensor:
        return torch.exp(self.log_gamma)


def block_init(mc: MonoNetCert, net: Network, arch: NetworkCertificateParams) -> None:
    """W = blockdiag(W_0, ..., W_0) with W_0 the compositional certificate's initial rows (``quadratic_init``)."""
    nc = NetworkCert(net.box, arch)
    quadratic_init(nc, net)
    w0 = nc.V.skip.weight.detach().numpy()
    f = w0.shape[0]
    W = np.zeros((f * net.n, 2 * net.n))
    for i in range(net.n):
        W[f * i:f * (i + 1), 2 * i:2 * i + 2] = w0
    with torch.no_grad():
        mc.V.skip.weight.copy_(torch.as_tensor(W))


def dynamics(net: Network, hist_j: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(D, Ax, Ad, Bw): X^d = D X + E on piece j (block diagonal D_ij) and X^+ = Ax X + Ad X^d + Bw w (diagonal
    blocks: each subsystem's loop, ``domain.subsystem_loop``; off-diagonal: the neighbour channels)."""
    n, dt = net.n, net.dt
    D, Ax, Ad = (np.zeros((2 * n, 2 * n)) for _ in range(3))
    Bw = np.zeros((2 * n, n))
    k = np.array(net.channel)
    for i in range(n):
        q, v = 2 * i, 2 * i + 1
        D[q:q + 2, q:q + 2] = delay_matrix(net, i, hist_j)
        Ax[q:q + 2, q:q + 2], Ad[q:q + 2, q:q + 2], _ = subsystem_loop(net, i)
        src = Ad if net.channel_delayed else Ax
        for j in np.nonzero(net.gain[i])[0]:
            src[v, 2 * j:2 * j + 2] += dt * net.gain[i, j] * k
        Bw[v, i] = dt
    return D, Ax, Ad, Bw


def ring_step(net: Network, j: int, Z):
    """(X, X^d, X^+, w) of a batch Z = (X, E, w) [B, 5N] on piece j: X^d = D X + E, X^+ = Ax X + Ad X^d + Bw w
    (``dynamics``); numpy or torch, in Z's own type (the compiled ``trace_ring_step``'s independent twin)."""
    n = net.n
    mats = dynamics(net, j)
    if isinstance(Z, torch.Tensor):
        mats = tuple(torch.as_tensor(m, dtype=Z.dtype) for m in mats)
    D, Ax, Ad, Bw = mats
    X, E, w = Z[:, :2 * n], Z[:, 2 * n:4 * n], Z[:, 4 * n:]
    Xd = X @ D.T + E
    return X, Xd, X @ Ax.T + Xd @ Ad.T + w @ Bw.T, w


def trace_ring_step(b: Builder, net: Network, j: int) -> tuple[Sym, Sym, Sym, Sym]:
    """``ring_step`` traced into ``b`` (input Z = (X, E, w) [5N]): (X, X^d, X^+, w) as Syms."""
    n = net.n
    D, Ax, Ad, Bw = dynamics(net, j)
    X, E, w = b.input(range(2 * n)), b.input(range(2 * n, 4 * n)), b.input(range(4 * n, 5 * n))
    Xd = b.add(b.linear(X, D), E)
    return X, Xd, b.add(b.linear(X, Ax), b.linear(Xd, Ad), b.linear(w, Bw)), w


def mono_decrease(mc: MonoNetCert, net: Network, j: int, Z: torch.Tensor, c_0: float):
    """(G, V(X), V(X^d)) for a batch Z = (X, E, w) [B, 5N] on piece j (torch, differentiable)."""
    X, Xd, nxt, w = ring_step(net, j, Z)
    vx, vxd = mc.V(X), mc.V(Xd)
    R = mc.rho * torch.maximum(vx, vxd) + mc.gamma() * w.abs().sum(-1)
    return mc.V(nxt) - torch.clamp(R, min=mc.rho * c_0), vx, vxd


def compile_mono(mc: MonoNetCert, net: Network, j: int, c_0: float) -> MaskedNet:
    """Masked ReLU net Z [5N] -> (G, V(X), V(X^d)) on piece j."""
    n = net.n
    b = Builder(5 * n)
    X, Xd, nxt, w = trace_ring_step(b, net, j)
    vx, vxd = mc.V.compile(b, X), mc.V.compile(b, Xd)
    R = b.add(b.max2(vx, vxd), b.linear(b.abs(w), np.ones((1, n))), weights=(mc.rho, float(mc.gamma().detach())))
    G = b.add(mc.V.compile(b, nxt), b.max2(R, b.linear(w, np.zeros((1, n)), mc.rho * c_0)), weights=(1.0, -1.0))
    return b.build(b.cat(G, vx, vxd))


@dataclass(frozen=True)
class MonoConstants:
    """c_0, eps [N, tau + 1, 2] of the monolithic certificate's domain, and the LP work spent on them."""

    c_0: float
    eps: np.ndarray
    lp_iterations: int
    lps: int


def mono_constants(mc: MonoNetCert, net: Network) -> MonoConstants:
    """Exact LPs: c_0 (min of V on each face of B^N; V is even, so one face per coordinate) and eps, the bound of
    X^d - D X(k) over the ring's closed-loop histories with every state in the level set {V <= c_0}
    (``domain.history_bound``: the compositional certificate's domain for the whole ring, with the exact coupling)."""
    n = net.n
    K = norm_rows(mc.V)
    box = np.array(list(net.box) * n)
    iters, lps = 0, 0
    c_0 = np.inf
    for d in range(2 * n):
        lo, hi = -box.copy(), box.copy()
        lo[d] = box[d]
        v, it = lp.minimize_norm(K, lo, hi)
        c_0, iters, lps = min(c_0, v), iters + it, lps + 1
    eps = np.zeros((n, net.tau + 1, 2))
    for j in range(1, net.tau + 1):
        D, Ax, Ad, Bw = dynamics(net, j)
        bound, it = history_bound(piece_histories(Ax, Ad, Bw, np.full(n, net.w_bound), D, net.tau, j), K, c_0)
        eps[:, j] = bound.reshape(n, 2)
        iters, lps = iters + it, lps + 2 * n * len(piece_starts(net.tau, j))
    return MonoConstants(float(c_0), eps, iters, lps)


def mono_property(mc: MonoNetCert, net: Network, j: int, k: MonoConstants) -> bab.Property:
    """G <= 0 on piece j where V(X), V(X^d) <= c_0."""
    hi = np.concatenate([np.array(list(net.box) * net.n), k.eps[:, j].reshape(-1), np.full(net.n, net.w_bound)])
    regions = ((np.eye(3)[1], k.c_0, "<="), (np.eye(3)[2], k.c_0, "<="))
    return bab.Property(compile_mono(mc, net, j, k.c_0), np.eye(3)[0], 0.0, -hi, hi, (), regions)


def sample_mono(mc: MonoNetCert, net: Network, j: np.ndarray, k: MonoConstants, n: int,
                gen: torch.Generator) -> torch.Tensor:
    """n queries Z uniform on piece j's box (j [n]), half of them with X scaled onto the level set's boundary."""
    N = net.n
    hi = torch.as_tensor(np.concatenate([np.tile(np.array(list(net.box) * N), (n, 1)),
                                         k.eps[:, j].transpose(1, 0, 2).reshape(n, -1),
                                         np.full((n, N), net.w_bound)], 1))
    Z = (2 * torch.rand(hi.shape, generator=gen, dtype=torch.float64) - 1) * hi
    with torch.no_grad():
        v = mc.V(Z[:, :2 * N])
    half = torch.arange(n) % 2 == 0
    Z[half, :2 * N] *= (k.c_0 / v[half].clamp(min=1e-12))[:, None]
    return Z


def train_mono_network(net: Network, arch: NetworkCertificateParams, p: NetworkCegisParams, steps: int,
                       gen: torch.Generator, log: Log, tag: str) -> MonoNetCert:
    """The block initialisation, then ``steps`` Adam steps of the compositional learner's loss
    mean relu(G + m c_0) over the level set + lambda_gamma gamma, in rounds of ``p.steps`` between which the
    constants are recomputed; pieces j uniform on 0 .. tau."""
    mc = MonoNetCert(net, arch)
    block_init(mc, net, arch)
    opt = torch.optim.Adam(mc.parameters(), lr=p.lr)
    k = mono_constants(mc, net)
    for step in range(steps):
        if step and step % p.steps == 0:
            k = mono_constants(mc, net)
        j = torch.randint(net.tau + 1, (p.batch,), generator=gen).numpy()
        Z = sample_mono(mc, net, j, k, p.batch, gen)
        loss = torch.zeros((), dtype=torch.float64)
        for jj in range(net.tau + 1):
            sel = torch.as_tensor(j == jj)
            G, vx, vxd = mono_decrease(mc, net, jj, Z[sel], k.c_0)
            inside = ((vx <= k.c_0) & (vxd <= k.c_0)).detach()
            loss = loss + (torch.relu(G + p.margin * k.c_0) * inside).sum() / max(float(inside.sum()), 1.0)
        loss = loss / (net.tau + 1) + p.lambda_gamma * mc.gamma()
        opt.zero_grad()
        loss.backward()
        opt.step()
        log(f"{tag}_loss", float(loss.detach()), step)
    return mc


def verify_mono_network(mc: MonoNetCert, net: Network, budget: BudgetParams) -> dict:
    """(M) piece by piece by ``bab.verify`` with N times the per-property budget (cells and MILPs; the same nodes
    per MILP), up to the first cell the budget leaves undecided (``stop_at_unknown``; then no further piece): from
    there the certificate cannot be proved under the budget, and spending the rest of it would decide no verdict
    (it is minutes of MILPs at N = 8 and about an hour at N = 16, the monolithic query growing with N). Outcome:
    proved (every piece), refuted (a counterexample) or unknown (a cell undecided); work counts to the verdict (the
    constants' LPs included) and seconds."""
    t0 = time.perf_counter()
    k = mono_constants(mc, net)
    work = dict.fromkeys(WORK, 0) | {"lp_iterations": k.lp_iterations}
    verified, refuted = True, 0
    for j in range(net.tau + 1):
        prop = mono_property(mc, net, j, k)
        res = bab.verify(prop, budget.max_cells * net.n, budget.max_depth, max_milp=budget.max_milp * net.n,
                         milp_nodes=budget.milp_nodes, stop_after_cex=budget.stop_after_cex, stop_at_unknown=True)
        work = {key: work[key] + v for key, v in res.work().items()}
        verified &= res.verified
        refuted += len(res.counterexamples)
        if not res.verified:
            break
    outcome = "proved" if verified else "refuted" if refuted else "unknown"
    return {"n": net.n, "outcome": outcome, "verified": verified, "counterexamples": refuted, **work,
            "pieces_checked": j + 1, "constants_lps": k.lps, "c_0": k.c_0, "seconds": time.perf_counter() - t0}
