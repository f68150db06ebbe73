"""Vector certificates for the linear delayed networks (drone formation, microgrid): learn, verify, re-verify.

Verified condition, per subsystem i (compositional), on the query z = (x, eps, s, w):

    (N)  V(x^+) <= max( c_s max(V(x), V(x^d)) + c_n |s| / (G_i kappa) + gamma |w| ,  rho c_0 )

for all x, x^d with V(x), V(x^d) <= c_0, |s| <= G_i kappa c_0, |w| <= w_bar, where the delayed state is
x^d = D_i x + eps with |eps| <= eps_i on the reachability-constrained delay domain (``constants``: the tau steps
back from x(k) are bounded by the one-step increments Delta over the level set), or x^d anywhere in the level set
on the full delay domain (the baseline). Here kappa = max {|k . y| : V(y) <= 1} (exact MILP), so every neighbour
state with V <= c_0 gives |k . x_j| <= kappa V(x_j) and, with a_ij = c_n g_ij / G_i,
c_n |s_i| / (G_i kappa) <= sum_j a_ij V(x_j^(d)). Hence (N) implies the issue's vector Lyapunov-Razumikhin
condition with the comparison row (1 - a_ii, a_ij) = (c_s, c_n g_ij / G_i), whose infinity norm is
c_s + c_n = rho < 1 for every N. The argument of ``paperdag.papers.vector_lyapunov`` (scaling by the window
maximum, all maps positively homogeneous) then gives sISS with N-independent constants.

Training (CEGIS): the polyhedral certificate V(x) = ||W y||_1 + eps ||y||_1 starts as a polyhedral approximation of
the LMI baseline's quadratic norm; each round a gradient falsifier ranks the subsystems, the exact MILP returns the
worst case of the most violated ones, the counterexamples join the training set, and Adam minimises the sampled
violation (uniform queries plus queries pushed onto the level-set boundary, where (N) binds). The candidate with
the lowest exact worst case is kept. Verification: every subsystem's query goes to branch and bound + MILP
(``bab.verify``); the MILP is exact, so each subsystem is proved or refuted with a concrete counterexample.
"""

from __future__ import annotations

import time
from functools import cache
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from paperdag.io import read_json, read_table, write_json, write_table

from . import bab
from .certify import judge_reverification
from .bounds import box_layer_bounds
from .domain import level_constants
from .graph import Builder
from .lmi import lmi_certificate
from .milp import maximize
from .network import (Network, NetworkCert, compile_network_query, network_box, network_decrease,
                      reachable_delay)

NET_ARCH = ("cert_feat", "cert_eps", "rho")


def kappa_of(V, channel: tuple[float, float], c_0: float, box: np.ndarray) -> float:
    """Sound upper bound of max {|k . y| : V(y) <= 1} (exact MILP on the box B / c_0, which contains the unit
    level set because V >= c_0 on the boundary of B and V is homogeneous)."""
    b = Builder(2)
    x = b.input([0, 1])
    net = b.build(b.cat(b.linear(x, [list(channel)]), V.compile(b, x)))
    hi = box / c_0
    unit_ball = [(np.array([0.0, 1.0]), -np.inf, 1.0)]  # V(y) <= 1
    r = maximize(net, -hi, hi, box_layer_bounds(net, -hi, hi), np.array([1.0, 0.0]), [], unit_ball)
    return float(r.bound)


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


def constants(nc: NetworkCert, net: Network) -> tuple[float, float, float, np.ndarray, np.ndarray]:
    """(c_0, c_1, kappa, Delta [N, 2], eps [N, 2]): c_0 = min of V on the boundary of B (exact MILP), kappa and the
    dual norms of ``network.reachable_delay`` by exact MILPs (``kappa_of``)."""
    box = np.array(net.box)
    c_0, c_1 = level_constants(nc.V, box)
    dual = cache(lambda l: kappa_of(nc.V, l, c_0, box))
    kappa = dual(net.channel)
    bounds = [reachable_delay(net, i, dual, c_0, kappa, net.w_bound) for i in range(net.n)]
    return c_0, c_1, kappa, np.array([d for d, _ in bounds]), np.array([e for _, e in bounds])


def network_property(nc: NetworkCert, net: Network, i: int, eps, c_0: float, kappa: float) -> bab.Property:
    """G_i <= 0 where V(x), V(x^d) <= c_0; eps None = full delay domain."""
    lo, hi, couplings = network_box(net, i, eps, c_0, kappa)
    regions = ((np.eye(3)[1], c_0, "<="), (np.eye(3)[2], c_0, "<="))
    return bab.Property(compile_network_query(nc, net, i, c_0, kappa, eps is not None), np.eye(3)[0], 0.0, lo, hi,
                        couplings, regions)


def _check(nc: NetworkCert, net: Network, reach: bool, p, gen: torch.Generator):
    """Verifier-in-the-loop step: falsify, then the exact MILP worst case of the ``net_cegis_milps`` subsystems
    the falsifier found most violated; if all of them hold, of every other subsystem too, until one fails (time
    limit ``net_milp_time``; past it the MILP's dual bound is used, which is sound but loose).
    Returns (worst G / c_0 among the subsystems checked, counterexamples [(i, z)], every subsystem proved)."""
    c_0, _, kappa, _, eps = constants(nc, net)
    eps = eps if reach else None
    fi, fz, fG = falsify_network(nc, net, eps, c_0, kappa, 512, 10, gen)
    worst = [float(fG[fi == i].max()) if (fi == i).any() else -np.inf for i in range(net.n)]
    order = np.argsort(worst)[::-1]
    new, bounds = [], []
    for rank, i in enumerate(order):
        if rank >= p.net_cegis_milps and max(bounds) > 0:
            break
        r = bab.worst_case(network_property(nc, net, int(i), eps, c_0, kappa), p.net_milp_time)
        bounds.append(r.bound / c_0)
        if r.z is not None and r.value is not None and r.value > -p.net_margin * c_0:
            new.append((int(i), r.z))
    new += [(int(fi[k]), fz[k].numpy()) for k in torch.nonzero(fG > 0).flatten()[: p.cegis_keep]]
    return max(bounds), new, len(bounds) == net.n and max(bounds) <= 0


def train_network_cert(net: Network, p, reach: bool, gen: torch.Generator, log, tag: str) -> tuple[NetworkCert, dict]:
    """CEGIS from the quadratic initialisation: each round checks the candidate (``_check``) and stops as soon as the
    MILP proves every subsystem; otherwise it keeps the best candidate so far (lowest exact worst case), adds the
    counterexamples (weighted ``net_cex_weight``) to the training set and runs ``net_steps`` Adam steps on
    mean relu(G + m c_0) over the domain + lambda_gamma gamma."""
    nc = NetworkCert(net.box, p.cert_feat, p.cert_eps, p.net_rho)
    quadratic_init(nc, net)
    opt = torch.optim.Adam(nc.parameters(), lr=p.net_lr)
    cex_idx, cex_z = np.zeros(0, int), torch.zeros(0, 6, dtype=torch.float64)
    best, best_state, n_cex, step_no, proved = np.inf, None, [], 0, False
    for rnd in range(p.net_rounds + 1):
        score, new, proved = _check(nc, net, reach, p, gen)
        log(f"{tag}_milp_worst_G_over_c0", score, rnd)
        n_cex.append(len(new))
        if score < best or proved:
            best, best_state = score, {k: v.clone() for k, v in nc.state_dict().items()}
        if proved or rnd == p.net_rounds:
            break
        if new:
            cex_idx = np.concatenate([cex_idx, np.repeat([i for i, _ in new], p.net_cex_weight)])
            cex_z = torch.cat([cex_z, torch.as_tensor(np.stack([z for _, z in new])).repeat_interleave(
                p.net_cex_weight, 0)])
        c_0, _, kappa, _, eps = constants(nc, net)
        eps = eps if reach else None
        for _ in range(p.net_steps):
            idx = torch.randint(net.n, (p.batch,), generator=gen).numpy()
            z = sample_queries(net, nc, idx, eps, c_0, kappa, gen)
            if len(cex_idx):
                idx, z = np.concatenate([idx, cex_idx]), torch.cat([z, cex_z])
            G, vx, vxd = network_decrease(nc, net, idx, z, c_0, kappa, reach)
            inside = ((vx <= c_0) & (vxd <= c_0)).detach()
            inside_n = float(inside.sum())
            loss = ((torch.relu(G + p.net_margin * c_0) * inside).sum() / max(inside_n, 1.0)
                    + p.lambda_gamma * nc.gamma())
            opt.zero_grad()
            loss.backward()
            opt.step()
            log(f"{tag}_loss", float(loss.detach()), step_no)
            step_no += 1
    nc.load_state_dict(best_state)
    return nc, {"best_round_worst_G_over_c0": best, "cegis_counterexamples_total": int(sum(n_cex)),
                "cegis_rounds_run": len(n_cex) - 1, "cegis_proved_every_subsystem": float(proved)}


def verify_network(nc: NetworkCert, net: Network, reach: bool, budget: dict) -> dict:
    """Verify (N) for every subsystem; summary with per-subsystem verdicts, cells and the sISS constants."""
    t0 = time.perf_counter()
    c_0, c_1, kappa, delta, eps = constants(nc, net)
    t_const = time.perf_counter() - t0
    rows, cex, per = [], [], []
    for i in range(net.n):
        prop = network_property(nc, net, i, eps if reach else None, c_0, kappa)
        res = bab.verify(prop, budget["max_cells"], budget["max_depth"], max_milp=budget["max_milp"],
                         milp_time=budget["milp_time"], time_budget=budget["vehicle_time"],
                         stop_after_cex=budget["stop_after_cex"])
        rows += [{"subsystem": i} | r for r in res.rows]
        for z in res.counterexamples:
            G, _, _ = network_decrease(nc, net, np.array([i]), torch.as_tensor(z[None]), c_0, kappa, reach)
            cex.append({"subsystem": i, "z": z.tolist(), "G_compiled": float(prop.net(z[None])[0, 0]),
                        "G_torch": float(G.detach()[0])})
        per.append({"subsystem": i, "verified": res.verified, "seconds": res.seconds, "cells": len(res.rows),
                    "milp_cells": res.count("proved_milp"), "refuted_cells": res.count("refuted"),
                    "unknown_cells": res.count("unknown")})
    c_s, c_n = (float(c) for c in nc.row().detach())
    gamma = float(nc.gamma().detach())
    summary = {"system": net.system, "n": net.n, "tau": net.tau, "reach": reach,
               "verified": all(q["verified"] for q in per), "per_subsystem": per, "c_0": c_0, "c_1": c_1,
               "kappa": kappa, "delta": delta.tolist(), "eps": eps.tolist(), "rho": nc.rho, "c_s": c_s, "c_n": c_n,
               "gamma": gamma,
               "constants_seconds": t_const, "w_certified": float(min(net.w_bound, (1 - nc.rho) * c_0 / gamma))}
    return {"summary": summary, "rows": rows, "counterexamples": cex}


def network_to_json(net: Network) -> dict:
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in net.__dict__.items()}


def network_from_json(d: dict) -> Network:
    d = dict(d)
    for k in ("a0", "a1", "b1", "gain"):
        d[k] = np.asarray(d[k], dtype=np.float64)
    d["box"], d["channel"] = tuple(d["box"]), tuple(d["channel"])
    return Network(**d)


def write_network_certificate(out: Path, nc: NetworkCert, net: Network, arch: dict, budget: dict,
                              result: dict) -> None:
    """Certificate folder: weights, meta (system, architecture, budgets), per-cell table, counterexamples."""
    out.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in nc.state_dict().items()}, str(out / "weights.safetensors"))
    write_json(out / "meta.json", {"kind": "network", "network": network_to_json(net), "arch": arch,
                                   "budget": budget, "reach": result["summary"]["reach"]})
    rows = result["rows"]
    write_table(out / "cells.parquet", {
        "subsystem": [r["subsystem"] for r in rows], "status": [r["status"] for r in rows],
        "depth": [int(r["depth"]) for r in rows], "bound": [r["bound"] for r in rows],
        "lo": [r["lo"] for r in rows], "hi": [r["hi"] for r in rows]})
    cex = result["counterexamples"]
    write_table(out / "counterexamples.parquet", {k: [c[k] for c in cex] for k in
                                                  ("subsystem", "z", "G_compiled", "G_torch")})
    write_json(out / "summary.json", result["summary"])


def load_network_cert(path: Path, arch: dict, box: tuple[float, float]) -> NetworkCert:
    nc = NetworkCert(box, arch["cert_feat"], arch["cert_eps"], arch["rho"])
    nc.load_state_dict(load_file(str(path)))
    return nc


def reverify_network(cert_dir: Path) -> tuple[bool, str]:
    """Re-verify a network certificate folder from its weights (see ``certify.reverify``)."""
    meta, stored = read_json(cert_dir / "meta.json"), read_json(cert_dir / "summary.json")
    net = network_from_json(meta["network"])
    nc = load_network_cert(cert_dir / "weights.safetensors", meta["arch"], net.box)
    fresh = verify_network(nc, net, meta["reach"], meta["budget"])["summary"]
    cex = read_table(cert_dir / "counterexamples.parquet").to_pylist()
    real = 0
    for c in cex:
        with torch.no_grad():
            G, vx, vxd = network_decrease(nc, net, np.array([c["subsystem"]]),
                                          torch.tensor([c["z"]], dtype=torch.float64), fresh["c_0"], fresh["kappa"],
                                          meta["reach"])
        real += bool(float(G[0]) > 0 and max(float(vx[0]), float(vxd[0])) <= fresh["c_0"] + 1e-9)
    per = fresh["per_subsystem"]
    msg = (f"{net.system} N={net.n} tau={net.tau}: {sum(q['verified'] for q in per)}/{len(per)} subsystems proved "
           f"({sum(q['refuted_cells'] for q in per)} refuted cells, {sum(q['unknown_cells'] for q in per)} unknown) "
           f"on the {'reachability-constrained' if meta['reach'] else 'full'} delay domain; "
           f"row (c_s, c_n)=({fresh['c_s']:.4f}, {fresh['c_n']:.4f}), c_0={fresh['c_0']:.4g}")
    return judge_reverification(msg, fresh["verified"], stored["verified"], fresh["c_s"] + fresh["c_n"] < 1.0, real,
                                len(cex))
