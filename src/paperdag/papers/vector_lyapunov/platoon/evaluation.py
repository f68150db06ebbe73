"""Evaluation of the platoon: cost of compositional verification against N (vector certificate on both delay
domains), closed-loop control under delays and disturbances (the ladder nominal -> retuned gains -> uncertified neural
-> LQR of the delay-augmented platoon, and the certified controller), and dense falsification of every certificate on
its verified domain."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
import torch

from ..params import CascadeParams, EvaluationParams, LadderParams
from ..scaling import loglog_slope, prefix_scaling
from .cascade import cascade_analysis
from .cegis import falsify, sample_box
from .certificate import Policy, VectorCert, decrease
from .certify import Certificate
from .ladder import gains_command, platoon_lqr, rollout, simulate_lqr, tune_gains
from .model import Platoon, accel, relative_accel, simulate


Rollout = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]  # (x0, w, lead_v) -> trajectory


def scenarios(pl: Platoon, steps: int, n_sims: int, w_bound: float, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(lead [T], w [T, n_sims, N]): a leader speed dip (-1 m/s for 3 s, ramped at 0.5 m/s^2) shared by every
    scenario, and per scenario uniform disturbances |w| <= w_bound drawn from a generator seeded by ``seed``."""
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(steps, dtype=torch.float64) * pl.dt
    lead = -torch.clamp(torch.minimum(0.5 * (t - 1.0), 0.5 * (6.0 - t)), 0.0, 1.0)
    w = [(2 * torch.rand(steps, pl.n, generator=g, dtype=torch.float64) - 1) * w_bound for _ in range(n_sims)]
    return lead, torch.stack(w, 1)


def closed_loop(pl: Platoon, roll: Rollout, steps: int, n_sims: int, w_bound: float,
                seed: int) -> dict[str, list[float]]:
    """The ``scenarios`` of ``seed`` (the same for every controller: paired), each rolled out from rest by ``roll``
    (``model.simulate`` with a controller, or a rung of ladder.py). Per scenario: the RMS spacing error over vehicles
    and time, and the string-stability ratio max_i ||e_i||_2 / ||e_1||_2."""
    lead, w = scenarios(pl, steps, n_sims, w_bound, seed)
    rms, ratio = [], []
    with torch.no_grad():
        for s in range(n_sims):
            e = roll(torch.zeros(pl.n, 2, dtype=torch.float64), w[:, s], lead)[..., 0]
            norms = e.norm(dim=0)
            rms.append(float(e.pow(2).mean().sqrt()))
            ratio.append(float(norms.max() / norms[0]))
    return {"rms_spacing": rms, "string_ratio": ratio}


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


def gain_one_equilibria(pl: Platoon, policy: Policy, c: float, grid: int = 4001) -> list[bool]:
    """Per follower: whether it has an equilibrium x_i = (e_s, c) with |e_s| <= S behind a predecessor cruising at
    the constant velocity error c, with constant histories (delta = 0, inside every delay domain). The spacing
    kinematics e_s(k+1) = e_s(k) + dt (e_vp - e_v) force e_v = c at any such equilibrium (the velocity error passes
    on at DC gain 1), so one exists iff the acceleration command u(e_s, c; c) changes sign (or vanishes) on a grid
    of e_s over [-S, S] (the command is continuous in e_s)."""
    S = pl.box[0]
    e_s = torch.linspace(-S, S, grid, dtype=torch.float64)
    xd = torch.stack([e_s, torch.full_like(e_s, c)], -1)
    vpd = torch.full_like(e_s, c)
    out = []
    with torch.no_grad():
        for i in range(pl.n):
            u = accel(pl, np.full(grid, i), xd, vpd, policy)
            out.append(bool(u.min() <= 0.0 <= u.max()))
    return out


def relative_equilibria(pl: Platoon, policy: Policy | None) -> list[float]:
    """Per follower: min(|u_i(S, 0)|, |u_i(-S, 0)|) / (kappa S), the relative command at the ends of the spacing
    range with zero relative speed (``model.relative_accel``); 0 means a nonzero constant-history equilibrium.

    In relative errors (leader at constant speed, w = 0) a state with constant histories is an equilibrium of the
    chain iff every follower has v~(k+1) = v~ and s~(k+1) = s~, i.e. (``model.relative_step``) u_i = u_p and
    v~_i = -h_i u_p; from the leader (u_0 = 0) on, by induction u_p = 0, so v~_i = 0 and u_i(s~_i, 0) = 0.
    The command is positively homogeneous in xr (linear law + bias-free ReLU residual), so u_i(s~, 0) = 0 for some
    s~ != 0 in [-S, S] iff it vanishes at s~ = S or at s~ = -S: two exact evaluations per follower. The origin
    (every vehicle at its predecessor's constant speed and its equilibrium spacing, any speed) is always one."""
    S = pl.box[0]
    ends = torch.tensor([[S, 0.0], [-S, 0.0]], dtype=torch.float64)
    with torch.no_grad():
        return [float(relative_accel(pl, np.full(2, i), ends, policy).abs().min()) / (pl.kappa * S)
                for i in range(pl.n)]


@dataclass(frozen=True)
class PlatoonResults:
    """What the platoon's claims are judged on: scaling by N (``prefix_scaling`` rows) of the vector certificate on
    the reachability-constrained (``reach``) and full (``full``) delay domains, its log-log slope (of the
    deterministic work), closed-loop performance per controller (``control``: means over the scenarios;
    ``scenarios``: one value per scenario, paired across controllers), the falsification of every vector certificate,
    split by its verdict, and per follower of the certified platoon its relative command at the ends of the spacing
    range (``relative_equilibria``: 0 = a nonzero equilibrium of the relative errors) and, beside, whether it passes a
    constant predecessor velocity error c on at DC gain 1 in absolute errors (``gain_one_equilibria`` at
    c = ``equilibrium_c``: why the certificate is stated in relative errors); ``cascade``: the certified platoon's
    linear stability and gains and its DC cycles (``cascade.cascade_analysis``); ``retuned_gains``: the retuned-gains
    rung's (k_s, k_v, k_d)."""

    reach: dict[str, list]
    full: dict[str, list]
    slope: float
    reach_summary: dict
    full_summary: dict
    w_sim: float
    control: dict[str, dict[str, float]]
    scenarios: dict[str, dict[str, list[float]]]
    falsified_verified: dict[str, dict[str, float]]
    falsified_refuted: dict[str, dict[str, float]]
    gain_one: list[bool]
    equilibrium_c: float
    relative_command: list[float]
    cascade: dict
    retuned_gains: tuple[float, ...]

    def cascade_metrics(self) -> dict[str, float]:
        """Scalars of ``cascade``: the largest spectral radius and acceleration gain per follower type, the largest
        HDV-CAV loop gain, the DC cycles (count, broken, largest gain) and the smallest N with a broken one (0: none)."""
        c = self.cascade
        out = {}
        for name, flag in (("hdv", False), ("cav", True)):
            own = [k for k, f in enumerate(c["is_cav"]) if f == flag]
            if own:
                out[f"cascade_{name}_spectral_radius_max"] = max(c["spectral_radius"][k] for k in own)
                out[f"cascade_{name}_accel_hinf_max"] = max(c["accel_hinf"][k] for k in own)
        return out | {"cascade_radius_bound": c["radius_bound"],
                      "cascade_loop_gain_max": max((lp["peak"] for lp in c["loops"]), default=0.0),
                      "cascade_dc_cycles": float(len(c["dc_cycles"])), "cascade_dc_broken": float(len(c["dc_broken"])),
                      "cascade_dc_gain_max": max((d["gain"] for d in c["dc_cycles"]), default=0.0),
                      "cascade_first_n_broken": float(c["first_n_broken"] or 0)}

    def metrics(self) -> dict[str, float | bool]:
        s = self.reach_summary
        return {"vector_loglog_slope": self.slope, "w_sim": self.w_sim, "reach_verified": s["verified"],
                "full_verified": self.full_summary["verified"], "c_0": s["c_0"], "rho": s["rho"],
                "gamma_max": s["gamma_max"], "w_certified": s["w_certified"],
                "gain_one_followers": float(sum(self.gain_one)),
                "relative_equilibrium_followers": float(sum(u == 0.0 for u in self.relative_command)),
                **{f"retuned_{k}": g for k, g in zip(("k_s", "k_v", "k_d"), self.retuned_gains, strict=True)},
                **self.cascade_metrics(),
                **{f"{k}_{m}": v[m] for k, v in self.control.items() for m in v},
                **{f"falsify_{k}_{m}": v[m] for k, v in (self.falsified_verified | self.falsified_refuted).items()
                   for m in v}}


def evaluate_platoon(reach: Certificate, full: Certificate, timing: dict[str, dict], uncertified: Policy,
                     n_grid: list[int], ev: EvaluationParams, ladder: LadderParams, cascade: CascadeParams,
                     seed: int) -> PlatoonResults:
    """Scaling (``timing``: the verify stages' seconds, by domain), closed loops (disturbance bound w_bar of the
    platoon; the ladder nominal, retuned gains (``ladder.tune_gains`` on training scenarios of ``seed + 1``),
    uncertified, LQR (``ladder.platoon_lqr``), and the certified controller), falsification of both
    certificates, the certified platoon's relative equilibria, its cascade analysis (at the certificate's rho), and
    (beside) its absolute DC-gain-1 equilibria at half the velocity bound."""
    pl = reach.pl
    t = timing["reach"]
    scal = prefix_scaling(reach.summary["per_vehicle"], t["seconds"], t["constants_seconds"], n_grid)
    retuned = tune_gains(pl, ladder.tune_steps, ladder.tune_lr,
                         *scenarios(pl, ev.sim_steps, ev.n_sims, pl.w_bound, seed + 1))
    law = platoon_lqr(pl)
    rolls: dict[str, Rollout] = {
        "nominal": partial(simulate, pl, policy=None),
        "retuned": lambda x0, w, lead: rollout(pl, gains_command(pl, torch.tensor(retuned)), x0, w, lead),
        "uncertified": partial(simulate, pl, policy=uncertified),
        "lqr": partial(simulate_lqr, pl, law),
        "certified": partial(simulate, pl, policy=reach.policy)}
    runs = {name: closed_loop(pl, roll, ev.sim_steps, ev.n_sims, pl.w_bound, seed) for name, roll in rolls.items()}
    control = {name: {m: float(np.mean(v)) for m, v in r.items()} for name, r in runs.items()}
    verified, refuted = {}, {}
    for name, cert in (("vector_reach", reach), ("vector_full", full)):
        s = cert.summary
        delta = np.array(s["delta"]) if cert.reach else None
        found = falsification(cert.vc, cert.policy, pl, delta, s["c_0"], ev.falsify_samples, ev.falsify_steps, seed)
        (verified if s["verified"] else refuted)[name] = found
    t = timing["full"]
    full_scal = prefix_scaling(full.summary["per_vehicle"], t["seconds"], t["constants_seconds"], n_grid)
    c = pl.box[1] / 2
    return PlatoonResults(scal, full_scal, loglog_slope(scal["n"], scal["bounds"]), reach.summary, full.summary,
                          pl.w_bound, control, runs, verified, refuted, gain_one_equilibria(pl, reach.policy, c), c,
                          relative_equilibria(pl, reach.policy),
                          cascade_analysis(pl, reach.policy, reach.summary["rho"], cascade.freq_grid,
                                           cascade.collinear_tol, cascade.root_tol), retuned)
