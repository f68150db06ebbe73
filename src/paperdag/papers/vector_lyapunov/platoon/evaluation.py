"""Evaluation of the platoon: cost of compositional verification against N (vector certificate on both delay
domains), closed-loop control under delays and disturbances (nominal, uncertified and certified
controllers), and dense falsification of every certificate on its verified domain."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..params import EvaluationParams
from ..scaling import loglog_slope, prefix_scaling
from .cegis import falsify, sample_box
from .certificate import Policy, VectorCert, decrease
from .certify import Certificate
from .model import Platoon, simulate


def closed_loop(pl: Platoon, policy: Policy | None, steps: int, n_sims: int, w_bound: float,
                seed: int) -> dict[str, float]:
    """Leader speed dip (-1 m/s for 3 s, ramped at 0.5 m/s^2) plus uniform disturbances |w| <= w_bound.

    RMS spacing error over vehicles and time; string-stability ratio max_i ||e_i||_2 / ||e_1||_2."""
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(steps, dtype=torch.float64) * pl.dt
    lead = -torch.clamp(torch.minimum(0.5 * (t - 1.0), 0.5 * (6.0 - t)), 0.0, 1.0)
    rms, ratio = [], []
    with torch.no_grad():
        for _ in range(n_sims):
            w = (2 * torch.rand(steps, pl.n, generator=g, dtype=torch.float64) - 1) * w_bound
            traj = simulate(pl, torch.zeros(pl.n, 2, dtype=torch.float64), w, lead, policy)
            e = traj[..., 0]
            norms = e.norm(dim=0)
            rms.append(float(e.pow(2).mean().sqrt()))
            ratio.append(float(norms.max() / norms[0]))
    return {"rms_spacing": float(np.mean(rms)), "string_ratio": float(np.mean(ratio))}


def falsification(vc: VectorCert, policy: Policy, pl: Platoon, delta: np.ndarray | None, c_0: float, n: int,
                  steps: int, seed: int) -> dict[str, float]:
    """Dense search for G_i > 0 on the verified domain: n uniform samples per follower + projected gradient
    ascent from n random starts. Returns the number of violations and the largest G found (in units of c_0)."""
    g = torch.Generator().manual_seed(seed)
    worst, violations = -np.inf, 0
    with torch.no_grad():
        for i in range(pl.n):
            z = sample_box(pl, np.full(n, i), delta, g)
            G, level = decrease(vc, policy, pl, np.full(n, i), z, c_0)
            G = torch.where(level <= c_0, G, -torch.inf)
            violations += int((G > 0).sum())
            worst = max(worst, float(G.max()) / c_0)
    _, _, G = falsify(vc, policy, pl, delta, c_0, n, steps, g)
    violations += int((G > 0).sum())
    worst = max(worst, float(G.max()) / c_0)
    return {"violations": violations, "worst_G_over_c0": worst}


@dataclass(frozen=True)
class PlatoonResults:
    """What the platoon's claims are judged on: scaling by N (``prefix_scaling`` rows) of the vector certificate on
    the reachability-constrained (``reach``) and full (``full``) delay domains, its log-log slope (of the
    deterministic work), closed-loop performance per controller, and the falsification of every vector certificate,
    split by its verdict."""

    reach: dict[str, list]
    full: dict[str, list]
    slope: float
    reach_summary: dict
    full_summary: dict
    w_sim: float
    control: dict[str, dict[str, float]]
    falsified_verified: dict[str, dict[str, float]]
    falsified_refuted: dict[str, dict[str, float]]

    def metrics(self) -> dict[str, float | bool]:
        s = self.reach_summary
        return {"vector_loglog_slope": self.slope, "w_sim": self.w_sim, "reach_verified": s["verified"],
                "full_verified": self.full_summary["verified"], "c_0": s["c_0"], "rho": s["rho"],
                "gamma_max": s["gamma_max"], "w_certified": s["w_certified"],
                **{f"{k}_{m}": v[m] for k, v in self.control.items() for m in v},
                **{f"falsify_{k}_{m}": v[m] for k, v in (self.falsified_verified | self.falsified_refuted).items()
                   for m in v}}


def evaluate_platoon(reach: Certificate, full: Certificate, timing: dict[str, dict], uncertified: Policy,
                     n_grid: list[int], ev: EvaluationParams, seed: int) -> PlatoonResults:
    """Scaling (``timing``: the verify stages' seconds, by domain), closed loops (disturbance bound w_bar of the
    platoon) and falsification of both certificates."""
    pl = reach.pl
    t = timing["reach"]
    scal = prefix_scaling(reach.summary["per_vehicle"], t["seconds"], t["constants_seconds"], n_grid)
    control = {name: closed_loop(pl, pol, ev.sim_steps, ev.n_sims, pl.w_bound, seed) for name, pol in (
        ("nominal", None), ("uncertified", uncertified), ("certified", reach.policy))}
    verified, refuted = {}, {}
    for name, cert in (("vector_reach", reach), ("vector_full", full)):
        s = cert.summary
        delta = np.array(s["delta"]) if cert.reach else None
        found = falsification(cert.vc, cert.policy, pl, delta, s["c_0"], ev.falsify_samples, ev.falsify_steps, seed)
        (verified if s["verified"] else refuted)[name] = found
    t = timing["full"]
    full_scal = prefix_scaling(full.summary["per_vehicle"], t["seconds"], t["constants_seconds"], n_grid)
    return PlatoonResults(scal, full_scal, loglog_slope(scal["n"], scal["bounds"]), reach.summary, full.summary,
                          pl.w_bound, control, verified, refuted)
