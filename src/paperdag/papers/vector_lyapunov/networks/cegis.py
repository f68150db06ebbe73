"""CEGIS of the networks' vector certificate, from the LMI baseline's quadratic norm.

The polyhedral certificate V(x) = ||W y||_1 + eps ||y||_1 starts as a polyhedral approximation of the LMI baseline's
quadratic norm (``quadratic_init``); each round a gradient falsifier ranks the (subsystem, delay-domain piece)
pairs, the exact MILP (deterministic node budget) returns the worst case of the most violated ones, the
counterexamples join the training set, and Adam minimises the sampled violation

    L = mean over the level set of relu(G_i(z) / c_0 + m) + lambda_gamma gamma

(uniform queries, queries on the level-set boundary where (N) binds, and queries at vertices of the (eps, s, w)
box) with c_0, kappa and eps as differentiable functions of V (``domain_tensors``), so the learner sees how the
delay domain moves with V. The candidate with the lowest exact worst case is kept; a round that does not improve
on it restarts from it with half the learning rate.
"""

from __future__ import annotations

import numpy as np
import torch

from ..params import NetworkCegisParams, NetworkCertificateParams
from ..runtime import Log
from ..verifier import bab
from .certificate import NetworkCert, network_decrease
from .certify import Constants, constants, network_property
from .domain import network_box
from .lmi import lmi_certificate
from .model import Network


def quadratic_init(nc: NetworkCert, net: Network) -> None:
    """Set W = U (L^T D): V approximates the quadratic norm |L^T x| (y = x / box = D^-1 x) of the LMI baseline's P
    (``lmi.lmi_certificate``: the common P in which every subsystem's delay-compensated closed loop contracts
    fastest), or, if that LMI is infeasible, of the real eigenbasis of the mean closed loop; U = feat unit directions
    (a polyhedral approximation of the round ball)."""
    D = np.diag(net.box)
    P, _ = lmi_certificate(net)
    if P is not None:
        LtD = np.linalg.cholesky(P).T @ D
    else:
        M = np.eye(2) + net.dt * np.array([[0.0, 1.0], [np.mean(net.a0 + net.a1), np.mean(net.b1)]])
        lam, vec = np.linalg.eig(M)
        J = np.stack([vec[:, 0].real, vec[:, 0].imag], 1) if abs(lam[0].imag) > 1e-12 else vec.real
        LtD = np.linalg.inv(J) @ D
    feat = nc.V.skip.weight.shape[0]
    ang = np.pi * np.arange(feat) / feat
    W = np.stack([np.cos(ang), np.sin(ang)], 1) @ LtD
    with torch.no_grad():
        nc.V.skip.weight.copy_(torch.as_tensor(W / np.abs(W).sum(0).max()))


def query_half_widths(net: Network, idx: np.ndarray, hist: np.ndarray | None, eps, c_0: float,
                      kappa: float) -> torch.Tensor:
    """[B, 6] half-widths of the (symmetric) query boxes of subsystems idx on pieces hist (None: full domain)."""
    if hist is None:
        return torch.as_tensor(np.stack([network_box(net, i, None, c_0, kappa)[1] for i in range(net.n)])[idx])
    table = np.stack([[network_box(net, i, eps[i, j], c_0, kappa)[1] for j in range(eps.shape[1])]
                      for i in range(net.n)])
    return torch.as_tensor(table[idx, hist])


def polygon_constants(nc: NetworkCert, box: tuple[float, float],
                      directions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(c_0, dual [k]) of the 2-D polyhedral norm V(x) = sum_r |K_r . x| as differentiable functions of its
    weights: the unit ball is a polygon whose vertices lie on the directions where some K_r . x = 0, so
    dual(l) = max over those vertices v of |l . v| (exact); V is convex, so its minimum on a face of the box sits at
    such a breakpoint or a corner (exact c_0). ``directions``: [k, 2] the l's."""
    inv = torch.diag(1.0 / nc.V.scale)
    K = torch.cat([nc.V.skip.weight @ inv, nc.V.eps * inv])
    V = lambda x: (x @ K.T).abs().sum(-1)  # noqa: E731
    d = torch.stack([-K[:, 1], K[:, 0]], -1)
    d = d / d.norm(dim=-1, keepdim=True).clamp(min=1e-12)
    v = d / V(d).clamp(min=1e-12)[:, None]
    dual = (directions @ v.T).abs().amax(-1)
    b0, b1 = box
    cand = []
    for q, (bq, bo) in enumerate(((b0, b1), (b1, b0))):  # faces x_q = b_q (V is even: the opposite faces agree)
        o = 1 - q
        safe = torch.where(K[:, o].abs() > 1e-12, K[:, o], torch.full_like(K[:, o], 1e-12))
        t = torch.clamp(-K[:, q] * bq / safe, -bo, bo)
        t = torch.cat([t, torch.tensor([bo, -bo], dtype=t.dtype)])
        pts = torch.stack([torch.full_like(t, bq), t], -1) if q == 0 else torch.stack([t, torch.full_like(t, bq)], -1)
        cand.append(V(pts))
    return torch.cat(cand).min(), dual


def domain_tensors(nc: NetworkCert, net: Network, ratio: np.ndarray) -> tuple[torch.Tensor, ...]:
    """(c_0, kappa, eps [N, tau + 1, 2]) as differentiable functions of the certificate (``polygon_constants``;
    eps by the formulas of ``domain.increment_bound`` / ``domain.delay_eps``) with eps scaled by ``ratio`` [N, tau + 1,
    2], the exact eps over the formula's at the last exact computation (``certify.constants``): the learner trains on
    the certified domain and sees how its changes move it."""
    n, tau, dt, w = net.n, net.tau, net.dt, net.w_bound
    dirs = [(0.0, 1.0), (1.0, 0.0), tuple(net.channel)] + [(float(net.a1[i]), float(net.b1[i])) for i in range(n)]
    c_0, dual = polygon_constants(nc, net.box, torch.tensor(dirs, dtype=torch.float64))
    v_dual, q_dual, kappa, ab = dual[0], dual[1], dual[2], dual[3:]
    a0, a1, b1 = (torch.as_tensor(np.abs(a)) for a in (net.a0, net.a1, net.b1))
    drift = c_0 * (a0 * q_dual + ab)
    channel = torch.as_tensor(net.gain.sum(1)) * kappa * c_0
    dq, dv = dt * c_0 * v_dual * torch.ones(n, dtype=torch.float64), dt * (drift + channel + w)
    eps = []
    for j in range(tau + 1):
        s1 = j * (j + 1) / 2
        s2 = s1 + j * tau
        eps.append(torch.stack([dt * dv * s1, dt * (a0 * dq * s1 + (a1 * dq + b1 * dv) * s2 + j * (channel + w))],
                               -1))
    return c_0, kappa, torch.stack(eps, 1) * torch.as_tensor(ratio)


def unit_queries(nc: NetworkCert, net: Network, n: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """(u [n, 6], rel [n]) normalised queries: x / box uniform in [-1, 1]^2, or (rel, half of them) x / c_0 on the
    unit level set {V = 1} (the boundary, where (N) binds); (eps, s, w) / their half-widths in [-1, 1]^4, a quarter
    at a random vertex (V(x^+) is convex in them, so its maximum over the box sits at a vertex)."""
    u = 2 * torch.rand(n, 6, generator=gen, dtype=torch.float64) - 1
    vertex = torch.arange(n) % 4 == 0
    u[vertex, 2:] = torch.sign(u[vertex, 2:])
    rel = torch.arange(n) % 2 == 0
    with torch.no_grad():
        d = u[rel, :2] * torch.tensor(net.box, dtype=torch.float64)
        u[rel, :2] = d / nc.V(d).clamp(min=1e-12)[:, None]
    return u, rel


def _half_widths(net: Network, idx: np.ndarray, hist: np.ndarray | None, c_0, kappa, eps) -> torch.Tensor:
    G = torch.as_tensor(net.gain.sum(1)[idx])
    e = eps[idx, hist] if eps is not None else torch.as_tensor(2 * np.array(net.box)).expand(len(idx), 2)
    return torch.cat([e, (G * kappa * c_0)[:, None], torch.full((len(idx), 1), net.w_bound, dtype=torch.float64)], 1)


def scale_queries(net: Network, idx: np.ndarray, hist: np.ndarray | None, u: torch.Tensor, rel: torch.Tensor, c_0,
                  kappa, eps) -> torch.Tensor:
    """Queries z from normalised ones on the current (differentiable) domain: x = u_x box, or x = c_0 u_x where
    ``rel``; (eps, s, w) = u times their half-widths."""
    box = torch.tensor(net.box, dtype=torch.float64)
    x = torch.where(rel[:, None], c_0 * u[:, :2], u[:, :2] * box)
    return torch.cat([x, u[:, 2:] * _half_widths(net, idx, hist, c_0, kappa, eps)], 1)


def normalise_queries(net: Network, idx: np.ndarray, hist: np.ndarray | None, z: torch.Tensor, c_0: float,
                      kappa: float, eps: np.ndarray | None) -> torch.Tensor:
    """The inverse of ``scale_queries`` (rel) for counterexamples, so that they follow the domain as it moves."""
    hw = _half_widths(net, idx, hist, c_0, kappa, torch.as_tensor(eps) if eps is not None else None)
    return torch.cat([z[:, :2] / c_0, z[:, 2:] / hw.clamp(min=1e-12)], 1)


def draw_pieces(net: Network, n: int, reach: bool, gen: torch.Generator) -> tuple[np.ndarray, np.ndarray | None]:
    """n random (subsystem, piece) pairs; pieces uniform on 0 .. tau (None on the full delay domain)."""
    idx = torch.randint(net.n, (n,), generator=gen).numpy()
    return idx, torch.randint(net.tau + 1, (n,), generator=gen).numpy() if reach else None


def sample_queries(net: Network, nc: NetworkCert, idx: np.ndarray, hist: np.ndarray | None, eps, c_0: float,
                   kappa: float, gen: torch.Generator) -> torch.Tensor:
    """Queries [B, 6] uniform on each (subsystem, piece) box; half of them with x scaled onto the level set's
    boundary, and of those half with (eps, s, w) at a random vertex of their box (V(x^+) is convex in them, so
    its maximum over the box sits at a vertex)."""
    hi = query_half_widths(net, idx, hist, eps, c_0, kappa)
    z = (2 * torch.rand(hi.shape, generator=gen, dtype=torch.float64) - 1) * hi
    with torch.no_grad():
        v = nc.V(z[:, :2])
    k = torch.arange(len(z))
    half = k % 2 == 0
    z[half, :2] *= (c_0 / v[half].clamp(min=1e-12))[:, None]
    vertex = k % 4 == 0
    z[vertex, 2:] = torch.sign(z[vertex, 2:]) * hi[vertex, 2:]
    return z


def falsify_network(nc: NetworkCert, net: Network, eps, c_0: float, kappa: float, n: int, steps: int,
                    gen: torch.Generator) -> tuple[np.ndarray, np.ndarray | None, torch.Tensor, torch.Tensor]:
    """Projected gradient ascent on G_i from n random starts over random (subsystem, piece) pairs (eps None: the
    full delay domain); returns (idx, hist, z, G) with G = -inf where a point is outside the domain (V(x) or
    V(x^d) > c_0)."""
    idx, hist = draw_pieces(net, n, eps is not None, gen)
    hi = query_half_widths(net, idx, hist, eps, c_0, kappa)
    z = sample_queries(net, nc, idx, hist, eps, c_0, kappa, gen)
    for _ in range(steps):
        z.requires_grad_(True)
        G, vx, vxd = network_decrease(nc, net, idx, hist, z, c_0, kappa)
        obj = G - 10.0 * (torch.relu(vx - c_0) + torch.relu(vxd - c_0))
        (g,) = torch.autograd.grad(obj.sum(), z)
        z = torch.maximum(torch.minimum(z.detach() + 0.02 * hi * torch.sign(g), hi), -hi)
    with torch.no_grad():
        G, vx, vxd = network_decrease(nc, net, idx, hist, z, c_0, kappa)
    inside = (vx <= c_0) & (vxd <= c_0)
    return idx, hist, z.detach(), torch.where(inside, G, torch.full_like(G, -np.inf))


def _check(nc: NetworkCert, net: Network, reach: bool, p: NetworkCegisParams,
           gen: torch.Generator) -> tuple[float, list[tuple[int, int, np.ndarray]], bool, Constants]:
    """Verifier-in-the-loop step: falsify, then the exact MILP worst case (at most ``p.milp_nodes`` nodes: a
    deterministic budget; the dual bound is sound when it runs out) of the ``p.milps`` (subsystem, piece) pairs the
    falsifier found most violated; if all of them hold, every other pair is decided too, until one fails.
    Returns (worst G / c_0 among the pairs checked, counterexamples [(i, j, z)], every pair proved, the candidate's
    constants)."""
    const = constants(nc, net)
    c_0, kappa, eps = const.c_0, const.kappa, const.eps if reach else None
    fi, fh, fz, fG = falsify_network(nc, net, eps, c_0, kappa, 512, 10, gen)
    fh_ = fh if fh is not None else np.zeros(len(fi), int)
    pairs = [(i, j) for i in range(net.n) for j in range(net.tau + 1 if reach else 1)]
    worst = [float(fG[(fi == i) & (fh_ == j)].max()) if ((fi == i) & (fh_ == j)).any() else -np.inf
             for i, j in pairs]
    order = sorted(range(len(pairs)), key=lambda k: -worst[k])  # stable: ties keep (i, j) order
    new, bounds = [], []
    for rank, k in enumerate(order):
        if rank >= p.milps and max(bounds) > 0:
            break
        i, j = pairs[k]
        prop = network_property(nc, net, i, j if reach else None, eps, c_0, kappa)
        if rank < p.milps:  # the exact worst case
            r = bab.worst_case(prop, p.milp_nodes)
            bounds.append(r.bound / c_0)
            if r.z is not None and r.value is not None and r.value > -p.margin * c_0:
                new.append((i, j, r.z))
        else:  # the others only need deciding: the verifier's own call (root split, decision MILPs)
            res = bab.verify(prop, 1, 40, max_milp=2, milp_nodes=p.milp_nodes, stop_after_cex=1)
            cex = [float(prop.net(z[None])[0, 0]) for z in res.counterexamples]
            bounds.append(max(cex) / c_0 if cex else 0.0 if res.verified else np.inf)
            new += [(i, j, z) for z in res.counterexamples]
    new += [(int(fi[k]), int(fh_[k]), fz[k].numpy()) for k in torch.nonzero(fG > 0).flatten()[: p.keep]]
    return max(bounds), new, len(bounds) == len(pairs) and max(bounds) <= 0, const


def train_network_cert(net: Network, arch: NetworkCertificateParams, p: NetworkCegisParams, reach: bool,
                       gen: torch.Generator, log: Log, tag: str) -> tuple[NetworkCert, dict[str, float]]:
    """CEGIS from the quadratic initialisation: each round checks the candidate (``_check``) and stops as soon as the
    MILP proves every (subsystem, piece); otherwise it keeps the best candidate so far (lowest exact worst case; a
    round that does not improve on it restarts from it with half the learning rate), adds the counterexamples
    (weighted ``p.cex_weight``) to the training set and runs ``p.steps`` Adam steps on L."""
    nc = NetworkCert(net.box, arch)
    quadratic_init(nc, net)
    opt = torch.optim.Adam(nc.parameters(), lr=p.lr)
    cex_idx, cex_hist, cex_u = np.zeros(0, int), np.zeros(0, int), torch.zeros(0, 6, dtype=torch.float64)
    best, best_state, n_cex, step_no, proved = np.inf, None, [], 0, False
    lr = p.lr
    for rnd in range(p.rounds + 1):
        score, new, proved, const = _check(nc, net, reach, p, gen)
        log(f"{tag}_milp_worst_G_over_c0", score, rnd)
        n_cex.append(len(new))
        if score < best or proved:
            best, best_state = score, {k: v.clone() for k, v in nc.state_dict().items()}
        elif best_state is not None:  # no progress: back to the best candidate with half the step size
            nc.load_state_dict(best_state)
            lr /= 2
            opt = torch.optim.Adam(nc.parameters(), lr=lr)
            const = constants(nc, net)
        if proved or rnd == p.rounds:
            break
        if new:
            ni, nh = np.array([i for i, _, _ in new]), np.array([j for _, j, _ in new])
            nu = normalise_queries(net, ni, nh if reach else None, torch.as_tensor(np.stack([z for _, _, z in new])),
                                   const.c_0, const.kappa, const.eps if reach else None)
            cex_idx = np.concatenate([cex_idx, np.repeat(ni, p.cex_weight)])
            cex_hist = np.concatenate([cex_hist, np.repeat(nh, p.cex_weight)])
            cex_u = torch.cat([cex_u, nu.repeat_interleave(p.cex_weight, 0)])
        ratio = np.divide(const.eps, const.eps_formula, out=np.ones_like(const.eps), where=const.eps_formula > 0)
        for _ in range(p.steps):
            c_0, kappa, eps = domain_tensors(nc, net, ratio)
            idx, hist = draw_pieces(net, p.batch, reach, gen)
            u, rel = unit_queries(nc, net, p.batch, gen)
            if len(cex_idx):
                idx, u = np.concatenate([idx, cex_idx]), torch.cat([u, cex_u])
                rel = torch.cat([rel, torch.ones(len(cex_u), dtype=torch.bool)])
                hist = np.concatenate([hist, cex_hist]) if reach else None
            z = scale_queries(net, idx, hist, u, rel, c_0, kappa, eps if reach else None)
            G, vx, vxd = network_decrease(nc, net, idx, hist, z, c_0, kappa)
            inside = ((vx <= c_0) & (vxd <= c_0)).detach()
            inside_n = float(inside.sum())
            loss = ((torch.relu(G / c_0 + p.margin) * inside).sum() / max(inside_n, 1.0)
                    + p.lambda_gamma * nc.gamma())
            opt.zero_grad()
            loss.backward()
            opt.step()
            log(f"{tag}_loss", float(loss.detach()), step_no)
            step_no += 1
    nc.load_state_dict(best_state)
    return nc, {"best_round_worst_G_over_c0": best, "cegis_counterexamples_total": int(sum(n_cex)),
                "cegis_rounds_run": len(n_cex) - 1, "cegis_proved_every_subsystem": float(proved)}
