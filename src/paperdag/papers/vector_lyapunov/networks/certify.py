"""Network certificate artifacts: the sound constants of a certificate (c_0, kappa, Delta by exact MILPs, eps by exact
LPs), verification of condition (N) subsystem by subsystem and piece by piece of the delay domain (branch and bound
+ MILP, ``bab.verify``, under a deterministic budget: each subsystem is proved, refuted with a concrete
counterexample, or left unknown when the budget is spent), the certificate folder (verifier/folder.py) and the
audit of its stored constants (verifier/record.py) that ``paperdag verify`` runs (reverify.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import torch

from paperdag.io import load_tensors, read_json

from ..lyapunov import Cert, level_constants, norm_rows
from ..params import BudgetParams, NetworkCertificateParams
from ..verifier import bab
from ..verifier.folder import META_FILE, WEIGHTS_FILE, write_certificate_folder
from ..verifier.graph import Builder
from ..verifier.milp import solve_on_box
from ..verifier.record import Constant, Sense
from .certificate import NetworkCert, compile_network_query, network_decrease
from .domain import HISTORY, history_eps, network_box, pieces, reachable_delay
from .model import Network


def kappa_of(V: Cert, channel: tuple[float, float], c_0: float, box: np.ndarray) -> float:
    """Sound upper bound of max {|k . y| : V(y) <= 1} (exact MILP on the box B / c_0, which contains the unit
    level set because V >= c_0 on the boundary of B and V is homogeneous)."""
    b = Builder(2)
    x = b.input([0, 1])
    net = b.build(b.cat(b.linear(x, [list(channel)]), V.compile(b, x)))
    hi = box / c_0
    unit_ball = [(np.array([0.0, 1.0]), -np.inf, 1.0)]  # V(y) <= 1
    return float(solve_on_box(net, -hi, hi, np.array([1.0, 0.0]), [], unit_ball).bound)


@dataclass(frozen=True)
class Constants:
    """Sound constants of a network certificate: c_0 = min of V on the boundary of B and c_1 = max of V on B,
    kappa = max {|k . y| : V(y) <= 1}, the delay domain's eps [N, tau + 1, 2] (``domain.history_eps``, exact LPs over
    the unrolled history) and the Razumikhin window it needs, the one-step increment bound Delta [N, 2] and the
    increment formula's eps_formula [N, tau + 1, 2] (``domain.reachable_delay``; the learner's differentiable domain
    is it scaled to eps), and the simplex iterations spent on eps."""

    c_0: float
    c_1: float
    kappa: float
    delta: np.ndarray
    eps: np.ndarray
    eps_formula: np.ndarray
    window: int
    lp_iterations: int


def constants(nc: NetworkCert, net: Network) -> Constants:
    """c_0 and c_1 (exact MILPs, ``level_constants``), kappa and the dual norms of ``domain.increment_bound`` (exact
    MILPs, ``kappa_of``), eps by ``domain.history_eps`` (window 4 tau + 1)."""
    box = np.array(net.box)
    c_0, c_1 = level_constants(nc.V, box)
    dual = cache(lambda l: kappa_of(nc.V, l, c_0, box))
    kappa = dual(net.channel)
    K = norm_rows(nc.V)
    deltas, formulas, epss, iterations = [], [], [], 0
    for i in range(net.n):
        d, e = reachable_delay(net, i, dual, c_0, kappa, net.w_bound)
        eps, it = history_eps(net, i, K, c_0, net.coupling(i) * kappa * c_0)
        deltas.append(d), formulas.append(e), epss.append(eps)
        iterations += it
    return Constants(c_0, c_1, kappa, np.array(deltas), np.array(epss), np.array(formulas),
                     (HISTORY + 1) * net.tau + 1, iterations)


def network_property(nc: NetworkCert, net: Network, i: int, j: int | None, eps: np.ndarray | None, c_0: float,
                     kappa: float) -> bab.Property:
    """G_i <= 0 where V(x), V(x^d) <= c_0, on piece j of the reachability-constrained domain (``eps`` [N, tau + 1,
    2]) or, with j and eps None, on the full delay domain."""
    lo, hi, couplings = network_box(net, i, None if j is None else eps[i, j], c_0, kappa)
    regions = ((np.eye(3)[1], c_0, "<="), (np.eye(3)[2], c_0, "<="))
    return bab.Property(compile_network_query(nc, net, i, j, c_0, kappa), np.eye(3)[0], 0.0, lo, hi, couplings,
                        regions)


WORK = ("cells", "milps", "milp_nodes", "lp_iterations", "bounds")


def summary_constants(nc: NetworkCert, net: Network, k: Constants) -> dict:
    """The constants summary.json records: the level-set and domain constants ``k``, the comparison row (c_s, c_n)
    with rho, the ISS gain gamma and w_certified = min(w_bar, (1 - rho) c_0 / gamma), the disturbance bound under
    which the floor rho c_0 of (N) keeps the level set invariant."""
    c_s, c_n = (float(c) for c in nc.row().detach())
    gamma = float(nc.gamma().detach())
    return {"c_0": k.c_0, "c_1": k.c_1, "kappa": k.kappa, "delta": k.delta.tolist(), "eps": k.eps.tolist(),
            "rho": nc.rho, "c_s": c_s, "c_n": c_n, "gamma": gamma, "window": k.window,
            "w_certified": float(min(net.w_bound, (1 - nc.rho) * k.c_0 / gamma))}


# the direction in which each stored constant is sound (verifier/record.py); eps is audited piece by piece
SOUND_AS: dict[str, Sense] = {"c_0": "lower", "c_1": "upper", "kappa": "upper", "eps": "upper", "delta": "upper",
                              "w_certified": "lower", "window": "upper", "gamma": "upper", "rho": "upper",
                              "c_s": "upper", "c_n": "upper"}


def constant_audit(stored: dict, derived: dict) -> list[Constant]:
    """Every constant of ``SOUND_AS``, stored against re-derived; eps one row per piece j."""
    out = []
    for name, sense in SOUND_AS.items():
        s, d = stored.get(name), derived[name]
        if name == "eps" and s is not None and np.shape(s) == np.shape(d):
            out += [Constant(f"eps piece {j}", np.asarray(s)[:, j], np.asarray(d)[:, j], sense)
                    for j in range(np.shape(d)[1])]
        else:
            out.append(Constant(name, s, d, sense))
    return out


def verify_network(nc: NetworkCert, net: Network, reach: bool, budget: BudgetParams,
                   k: Constants | None = None, progress: Callable[[Iterable[int]], Iterable[int]] = iter) -> dict:
    """Verify (N) for every subsystem, on every piece j = 0 .. tau of the reachability-constrained delay domain if
    ``reach``, else on the full one, with the constants ``k`` (computed here if None); ``progress`` wraps the
    subsystems' range (``paperdag verify`` counts and budgets them). Returns the summary
    (per-subsystem verdicts, deterministic work counts and the sISS constants: a function of the certificate and the
    budget alone), the cell rows, the counterexamples and ``timing`` (wall-clock seconds per subsystem and of the
    constants, reported beside the work, never in the certificate folder)."""
    t0 = time.perf_counter()
    k = constants(nc, net) if k is None else k
    c_0, kappa, eps = k.c_0, k.kappa, k.eps
    t_const = time.perf_counter() - t0
    rows, cex, per, seconds = [], [], [], []
    for i in progress(range(net.n)):
        work = dict.fromkeys(WORK, 0)
        verified, counts, t_i = True, {"proved_milp": 0, "refuted": 0, "unknown": 0}, 0.0
        for j in pieces(net, reach):
            prop = network_property(nc, net, i, j, eps if reach else None, c_0, kappa)
            res = bab.verify(prop, budget.max_cells, budget.max_depth, max_milp=budget.max_milp,
                             milp_nodes=budget.milp_nodes, stop_after_cex=budget.stop_after_cex)
            rows += [{"subsystem": i, "piece": -1 if j is None else j} | r for r in res.rows]
            for z in res.counterexamples:
                hist = None if j is None else np.array([j])
                G, _, _ = network_decrease(nc, net, np.array([i]), hist, torch.as_tensor(z[None]), c_0, kappa)
                cex.append({"subsystem": i, "piece": -1 if j is None else j, "z": z.tolist(),
                            "G_compiled": float(prop.net(z[None])[0, 0]), "G_torch": float(G.detach()[0])})
            verified &= res.verified
            work = {key: work[key] + v for key, v in res.work().items()}
            counts = {key: counts[key] + res.count(key) for key in counts}
            t_i += res.seconds
        per.append({"subsystem": i, "verified": verified, **work, "milp_cells": counts["proved_milp"],
                    "refuted_cells": counts["refuted"], "unknown_cells": counts["unknown"]})
        seconds.append(t_i)
    summary = {"system": net.system, "n": net.n, "tau": net.tau, "reach": reach,
               "verified": all(q["verified"] for q in per), "per_subsystem": per, **summary_constants(nc, net, k),
               "constants_work": {"lp_iterations": k.lp_iterations}}
    return {"summary": summary, "rows": rows, "counterexamples": cex,
            "timing": {"constants_seconds": t_const, "seconds": seconds}}


def problem_data(net: Network, reach: bool) -> dict:
    """The problem a network certificate is about: the ring's coefficients, coupling gains and channel, dt, tau, the
    state box, w_bar and the delay domain's kind (meta.json holds it; summary.json its digest)."""
    return net.to_json() | {"reach": reach}


def write_network_certificate(out: Path, nc: NetworkCert, net: Network, arch: NetworkCertificateParams,
                              budget: BudgetParams, result: dict) -> None:
    """The certificate folder of ``verify_network``'s ``result`` (meta.kind = "network")."""
    meta = {"kind": "network", "network": net.to_json(), "arch": arch.model_dump(), "budget": budget.model_dump(),
            "reach": result["summary"]["reach"]}
    write_certificate_folder(out, nc.state_dict(), meta, problem_data(net, meta["reach"]), "subsystem",
                             result["rows"], result["counterexamples"], ("piece", "z", "G_compiled", "G_torch"),
                             result["summary"], ("piece",))


def load_network_cert(path: Path, arch: NetworkCertificateParams, box: tuple[float, float]) -> NetworkCert:
    """A certificate saved as a state dict (``train_network`` stage, or a certificate folder's weights)."""
    nc = NetworkCert(box, arch)
    nc.load_state_dict(load_tensors(path))
    return nc


def load_certificate_folder(folder: Path) -> tuple[NetworkCert, Network, dict]:
    """(certificate, network, meta) of a network certificate folder."""
    meta = read_json(folder / META_FILE)
    net = Network.from_json(meta["network"])
    return load_network_cert(folder / WEIGHTS_FILE, NetworkCertificateParams(**meta["arch"]), net.box), net, meta
