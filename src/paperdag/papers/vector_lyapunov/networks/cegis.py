"""CEGIS of the networks' vector certificate, from the LMI baseline's quadratic norm.

The polyhedral certificate V(x) = ||W y||_1 + eps ||y||_1 starts as a polyhedral approximation of the LMI baseline's
quadratic norm (``quadratic_init``); each round a gradient falsifier ranks the subsystems, the exact MILP returns the
worst case of the most violated ones, the counterexamples join the training set, and Adam minimises the sampled
violation

    L = mean over the level set of relu(G_i(z) + m c_0) + lambda_gamma gamma

(uniform queries plus queries pushed onto the level-set boundary, where (N) binds). The candidate with the lowest
exact worst case is kept.
"""

from __future__ import annotations

import numpy as np
import torch

from ..params import NetworkCegisParams, NetworkCertificateParams
from ..runtime import Log
from ..verifier import bab
from .certificate import NetworkCert, network_decrease
from .certify import constants, network_property
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


def query_half_widths(net: Network, idx: np.ndarray, eps, c_0: float, kappa: float) -> torch.Tensor:
    """[B, 6] half-widths of the (symmetric) query boxes of subsystems idx."""
    return torch.as_tensor(np.stack([network_box(net, i, eps, c_0, kappa)[1] for i in range(net.n)])[idx])


def sample_queries(net: Network, nc: NetworkCert, idx: np.ndarray, eps, c_0: float, kappa: float,
                   gen: torch.Generator) -> torch.Tensor:
    """Queries [B, 6] uniform on each subsystem's box; half of them with x scaled onto the level set's boundary."""
    hi = query_half_widths(net, idx, eps, c_0, kappa)
    z = (2 * torch.rand(hi.shape, generator=gen, dtype=torch.float64) - 1) * hi
    with torch.no_grad():
        v = nc.V(z[:, :2])
    half = torch.arange(len(z)) % 2 == 0
    z[half, :2] *= (c_0 / v[half].clamp(min=1e-12))[:, None]
    return z


def falsify_network(nc: NetworkCert, net: Network, eps, c_0: float, kappa: float, n: int, steps: int,
                    gen: torch.Generator) -> tuple[np.ndarray, torch.Tensor, torch.Tensor]:
    """Projected gradient ascent on G_i from n random starts over random subsystems; returns (idx, z, G) with
    G = -inf where a point is outside the domain (V(x) or V(x^d) > c_0)."""
    idx = torch.randint(net.n, (n,), generator=gen).numpy()
    hi = query_half_widths(net, idx, eps, c_0, kappa)
    z = sample_queries(net, nc, idx, eps, c_0, kappa, gen)
    reach = eps is not None
    for _ in range(steps):
        z.requires_grad_(True)
        G, vx, vxd = network_decrease(nc, net, idx, z, c_0, kappa, reach)
        obj = G - 10.0 * (torch.relu(vx - c_0) + torch.relu(vxd - c_0))
        (g,) = torch.autograd.grad(obj.sum(), z)
        z = torch.maximum(torch.minimum(z.detach() + 0.02 * hi * torch.sign(g), hi), -hi)
    with torch.no_grad():
        G, vx, vxd = network_decrease(nc, net, idx, z, c_0, kappa, reach)
    inside = (vx <= c_0) & (vxd <= c_0)
    return idx, z.detach(), torch.where(inside, G, torch.full_like(G, -np.inf))


def _check(nc: NetworkCert, net: Network, reach: bool, p: NetworkCegisParams,
           gen: torch.Generator) -> tuple[float, list[tuple[int, np.ndarray]], bool]:
    """Verifier-in-the-loop step: falsify, then the exact MILP worst case of the ``p.milps`` subsystems the falsifier
    found most violated; if all of them hold, of every other subsystem too, until one fails (time limit
    ``p.milp_time``; past it the MILP's dual bound is used, which is sound but loose).
    Returns (worst G / c_0 among the subsystems checked, counterexamples [(i, z)], every subsystem proved)."""
    c_0, _, kappa, _, eps = constants(nc, net)
    eps = eps if reach else None
    fi, fz, fG = falsify_network(nc, net, eps, c_0, kappa, 512, 10, gen)
    worst = [float(fG[fi == i].max()) if (fi == i).any() else -np.inf for i in range(net.n)]
    order = np.argsort(worst)[::-1]
    new, bounds = [], []
    for rank, i in enumerate(order):
        if rank >= p.milps and max(bounds) > 0:
            break
        r = bab.worst_case(network_property(nc, net, int(i), eps, c_0, kappa), p.milp_time)
        bounds.append(r.bound / c_0)
        if r.z is not None and r.value is not None and r.value > -p.margin * c_0:
            new.append((int(i), r.z))
    new += [(int(fi[k]), fz[k].numpy()) for k in torch.nonzero(fG > 0).flatten()[: p.keep]]
    return max(bounds), new, len(bounds) == net.n and max(bounds) <= 0


def train_network_cert(net: Network, arch: NetworkCertificateParams, p: NetworkCegisParams, reach: bool,
                       gen: torch.Generator, log: Log, tag: str) -> tuple[NetworkCert, dict[str, float]]:
    """CEGIS from the quadratic initialisation: each round checks the candidate (``_check``) and stops as soon as the
    MILP proves every subsystem; otherwise it keeps the best candidate so far (lowest exact worst case), adds the
    counterexamples (weighted ``p.cex_weight``) to the training set and runs ``p.steps`` Adam steps on L."""
    nc = NetworkCert(net.box, arch)
    quadratic_init(nc, net)
    opt = torch.optim.Adam(nc.parameters(), lr=p.lr)
    cex_idx, cex_z = np.zeros(0, int), torch.zeros(0, 6, dtype=torch.float64)
    best, best_state, n_cex, step_no, proved = np.inf, None, [], 0, False
    for rnd in range(p.rounds + 1):
        score, new, proved = _check(nc, net, reach, p, gen)
        log(f"{tag}_milp_worst_G_over_c0", score, rnd)
        n_cex.append(len(new))
        if score < best or proved:
            best, best_state = score, {k: v.clone() for k, v in nc.state_dict().items()}
        if proved or rnd == p.rounds:
            break
        if new:
            cex_idx = np.concatenate([cex_idx, np.repeat([i for i, _ in new], p.cex_weight)])
            cex_z = torch.cat([cex_z, torch.as_tensor(np.stack([z for _, z in new])).repeat_interleave(
                p.cex_weight, 0)])
        c_0, _, kappa, _, eps = constants(nc, net)
        eps = eps if reach else None
        for _ in range(p.steps):
            idx = torch.randint(net.n, (p.batch,), generator=gen).numpy()
            z = sample_queries(net, nc, idx, eps, c_0, kappa, gen)
            if len(cex_idx):
                idx, z = np.concatenate([idx, cex_idx]), torch.cat([z, cex_z])
            G, vx, vxd = network_decrease(nc, net, idx, z, c_0, kappa, reach)
            inside = ((vx <= c_0) & (vxd <= c_0)).detach()
            inside_n = float(inside.sum())
            loss = ((torch.relu(G + p.margin * c_0) * inside).sum() / max(inside_n, 1.0)
                    + p.lambda_gamma * nc.gamma())
            opt.zero_grad()
            loss.backward()
            opt.step()
            log(f"{tag}_loss", float(loss.detach()), step_no)
            step_no += 1
    nc.load_state_dict(best_state)
    return nc, {"best_round_worst_G_over_c0": best, "cegis_counterexamples_total": int(sum(n_cex)),
                "cegis_rounds_run": len(n_cex) - 1, "cegis_proved_every_subsystem": float(proved)}
