"""Evaluation of the network systems: scaling of compositional verification in N, the delays, the full-domain, LMI
and monolithic baselines, dense falsification of every verified certificate, and the sISS bound along closed-loop
simulations."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from paperdag.io import read_json, read_table

from ..params import EvaluationParams, NetworkParams
from ..scaling import loglog_slope, prefix_scaling
from ..verifier.folder import COUNTEREXAMPLES_FILE, META_FILE, SUMMARY_FILE
from .cegis import falsify_network, sample_queries
from .certificate import network_decrease
from .certify import load_certificate_folder
from .control import cost, lqr_cost, scenarios
from .model import SYSTEMS, make_network, simulate_network


def falsify_folder(folder: Path, n: int, steps: int, seed: int) -> dict[str, float]:
    """n uniform queries per subsystem (over the pieces of its delay domain) + n projected-gradient starts on the
    certificate's own domain (c_0, kappa and eps as the verifier computed them, from summary.json)."""
    nc, net, meta = load_certificate_folder(folder)
    s = read_json(folder / SUMMARY_FILE)
    c_0, kappa, eps = s["c_0"], s["kappa"], np.array(s["eps"]) if meta["reach"] else None
    g = torch.Generator().manual_seed(seed)
    violations, worst = 0, -np.inf
    with torch.no_grad():
        for i in range(net.n):
            idx = np.full(n, i)
            hist = torch.randint(net.tau + 1, (n,), generator=g).numpy() if eps is not None else None
            G, vx, vxd = network_decrease(nc, net, idx, hist, sample_queries(net, nc, idx, hist, eps, c_0, kappa, g),
                                          c_0, kappa)
            G = torch.where((vx <= c_0) & (vxd <= c_0), G, -torch.inf)
            violations += int((G > 0).sum())
            worst = max(worst, float(G.max()) / c_0)
    _, _, _, G = falsify_network(nc, net, eps, c_0, kappa, n, steps, g)
    return {"violations": violations + int((G > 0).sum()), "worst_G_over_c0": max(worst, float(G.max()) / c_0)}


def siss_simulation(folder: Path, steps: int, n_sims: int, seed: int) -> dict[str, float]:
    """Closed loop of the certified network from random initial states on 0.9 of the level set {V <= c_0} with a
    constant pre-history (inside the certified domain: piece j = min(k, tau)). Two consequences of the certificate,
    as ratios that must stay <= 1, with the certificate's Razumikhin window L (summary ``window``, 4 tau + 1):
    without disturbance  M(k) <= rho^floor(k / L) M(0) for k >= 1  (M(k) = max_i V(x_i(k)), M(0) the window
    maximum of the constant pre-history); with |w| <= w_cert = (1 - rho) c_0 / gamma the level set is forward
    invariant, M(k) <= c_0."""
    nc, net, _ = load_certificate_folder(folder)
    s = read_json(folder / SUMMARY_FILE)
    c_0, rho, window = s["c_0"], s["rho"], s["window"]
    w_cert = min(net.w_bound, (1 - rho) * c_0 / s["gamma"])
    g = torch.Generator().manual_seed(seed)
    decay, invariance = 0.0, 0.0
    with torch.no_grad():
        k = torch.arange(steps + 1)
        envelope = rho ** (k // window).double()
        for _ in range(n_sims):
            x0 = torch.randn(net.n, 2, generator=g, dtype=torch.float64)
            x0 *= (0.9 * c_0 / nc.V(x0))[:, None]
            M = nc.V(simulate_network(net, x0, torch.zeros(steps, net.n, dtype=torch.float64))).max(-1).values
            decay = max(decay, float((M[1:] / (envelope[1:] * M[0])).max()))  # k >= 1 (k = 0 is 1 by definition)
            ws = (2 * torch.rand(steps, net.n, generator=g, dtype=torch.float64) - 1) * w_cert
            invariance = max(invariance, float(nc.V(simulate_network(net, x0, ws)).max() / c_0))
    return {"decay_ratio": decay, "invariance_ratio": invariance, "w_cert": w_cert, "window": window}


def held_out_costs(p: NetworkParams, dt: float, study: dict, draws: dict[str, list[float]], n_sims: int, steps: int,
                   seed: int) -> dict[str, list[float]]:
    """Per controller of a control study (``study``: the control stage's control.json, whose gains, or LQR gain K, it
    reads), the cost J (control.cost, control.lqr_cost) of each of ``n_sims`` held-out scenarios (control.scenarios on
    the study's ring, with its load steps where the study has a load_step_window, drawn from
    ``seed`` here: fresh, never seen by the tuning), the same scenarios for every controller (paired by scenario).
    Every scenario has the same steps and subsystems, so the mean of a controller's values is its J over all of
    them."""
    net = make_network(p, dt, study["system"], study["n"], study["tau"], draws)
    x0, w = scenarios(net, n_sims, steps, torch.Generator().manual_seed(seed), study.get("load_step_window"))
    out = {}
    with torch.no_grad():
        for name, c in study["controllers"].items():
            if "K" in c:  # the LQR bound of the delay-augmented ring (control.lqr)
                out[name] = [lqr_cost(net, p, draws, np.asarray(c["K"]), x0[s:s + 1], w[:, s:s + 1],
                                      study["effort"])["J"] for s in range(n_sims)]
                continue
            gains = {k: torch.as_tensor(np.asarray(v, dtype=np.float64)) for k, v in c["gains"].items()}
            out[name] = [float(cost(net, p, draws, gains, x0[s:s + 1], w[:, s:s + 1], study["effort"])["J"])
                         for s in range(n_sims)]
    return out


@dataclass(frozen=True)
class LevelSet:
    """Subsystem state grid (q, v), the neural certificate's values V on it and its level c_0, the LMI quadratic
    norm sqrt(x^T P x) and its level (None where the LMI is infeasible), and subsystem 0's trajectory [T, 2]."""

    q: np.ndarray
    v: np.ndarray
    V: np.ndarray
    c_0: float
    quadratic: np.ndarray | None
    quadratic_c_0: float | None
    trajectory: np.ndarray


def level_set(folder: Path, lmi: dict | None, seed: int) -> LevelSet:
    """The level sets of a certificate folder and of its LMI baseline (``lmi``: its lmi.json row), and the closed
    loop from a random point on the neural level set's edge (300 undisturbed steps)."""
    nc, net, _ = load_certificate_folder(folder)
    c_0 = read_json(folder / SUMMARY_FILE)["c_0"]
    S, E = net.box
    q, v = np.meshgrid(np.linspace(-S, S, 201), np.linspace(-E, E, 201))
    x = np.stack([q, v], -1)
    with torch.no_grad():
        V = nc.V(torch.as_tensor(x)).numpy()
    quadratic = None
    if lmi and lmi["P"] is not None:
        quadratic = np.sqrt(np.einsum("...i,ij,...j->...", x, np.array(lmi["P"]), x))
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        x0 = torch.randn(net.n, 2, generator=g, dtype=torch.float64)
        x0 *= (c_0 / nc.V(x0))[:, None]
        traj = simulate_network(net, x0, torch.zeros(300, net.n, dtype=torch.float64))[:, 0].numpy()
    return LevelSet(q, v, V, c_0, quadratic, lmi["c_0"] if quadratic is not None else None, traj)


@dataclass(frozen=True)
class NetworkResults:
    """What the network claims are judged on. ``scaling``/``slopes``: per system, the first delay's
    reachability-constrained certificate by N (``prefix_scaling``; slope of log work); ``runs``: every verified
    network's summary by name; ``neural``/``lmi``: verdict per ``<system>_tau<tau>`` of the neural certificate and
    of the LMI's closed-form check (``lmi_feasible``: whether the LMI found a common P at all, the P whose norm's
    polygon initialises the neural one); ``quadratic``: per case, the quadratic class (quadratic.py, ``_exact``:
    its outcome and, per P, outcome, bound on sup F, SOCPs and the units not proved); ``cases``: the neural one's
    subsystems refuted / unknown and the largest violation G / c_0 its counterexamples show); ``full_refuted``: per
    system, the full-domain baseline refuted while the reachability-constrained certificate is verified;
    ``falsified``/``simulated``: per verified certificate, ``falsify_folder`` and ``siss_simulation``;
    ``monolithic``: per system, per N, the monolithic baselines' and the compositional certificate's outcome and work
    (``monolithic_rows``);
    ``control``: per system, the control study (control.py; the control stage's control.json); ``control_costs``:
    per system and controller, J on each held-out scenario of evaluate (``held_out_costs``, paired by scenario)."""

    scaling: dict[str, dict[str, list]]
    slopes: dict[str, float]
    runs: dict[str, dict]
    neural: dict[str, bool]
    lmi: dict[str, bool]
    lmi_feasible: dict[str, bool]
    quadratic: dict[str, dict]
    cases: dict[str, dict]
    full_refuted: list[bool]
    falsified: dict[str, dict[str, float]]
    simulated: dict[str, dict[str, float]]
    monolithic: dict[str, list[dict]]
    control: dict[str, dict]
    control_costs: dict[str, dict[str, list[float]]]

    def metrics(self) -> dict[str, float | bool]:
        out: dict[str, float | bool] = {}
        for name, r in self.runs.items():
            out[f"{name}_verified"] = r["verified"]
            out[f"{name}_bounds"] = sum(q["bounds"] for q in r["per_subsystem"])
            out[f"{name}_seconds"] = r["timing"]["constants_seconds"] + sum(r["timing"]["seconds"])
        for system, rows in self.monolithic.items():
            for row in rows:
                out[f"{system}_mono{row['n']}_verified"] = row["mono"]["verified"]
                out[f"{system}_mono{row['n']}_lp_iterations"] = row["mono"]["lp_iterations"]
                if "ring" in row:
                    out[f"{system}_ring{row['n']}_verified"] = row["ring"]["verified"]
                    out[f"{system}_ring{row['n']}_milp_nodes"] = row["ring"]["milp_nodes"]
                    out[f"{system}_ring_lmi{row['n']}_verified"] = row["lmi"]["verified"]
        for system, c in self.control.items():
            out |= {f"{system}_control_{name}_J": v["J"] for name, v in c["controllers"].items()}
            out[f"{system}_control_certified_alpha"] = -1.0 if c["certified_alpha"] is None else c["certified_alpha"]
        return out | {f"{s}_loglog_slope": v for s, v in self.slopes.items()} | {
            "network_falsify_violations": sum(v["violations"] for v in self.falsified.values()),
            "network_certificates_verified": len(self.falsified),
            "network_delays_proved": sum(self.neural.values())} | {
            f"{case}_quadratic_verified": q["outcome"] == "proved" for case, q in self.quadratic.items()}


def _case(run: dict, counterexamples: list[dict], features: int, rounds: int, lmi: dict | None) -> dict:
    """One (system, tau) case: verdict, refuted/unknown subsystems, the worst counterexample, V's features, the CEGIS
    learning rounds run (0: the certificate as initialised, the polygon of the LMI norm, before any learning step),
    and the delay-domain term of the LMI baseline's bound (``lmi.check_quadratic``: what the delay costs any
    certificate of that quadratic shape, in units of c_0; it grows about as tau^2 with eps)."""
    per = run["per_subsystem"]
    worst = max([c["G_torch"] for c in counterexamples], default=None)
    rows = (lmi or {}).get("per_subsystem") or []
    return {"verified": run["verified"], "n": run["n"], "refuted": sum(q["refuted_cells"] > 0 for q in per),
            "unknown": sum(q["unknown_cells"] > 0 and q["refuted_cells"] == 0 for q in per),
            "max_violation_G_over_c0": None if worst is None else worst / run["c_0"], "features": features,
            "learning_rounds": rounds, "lmi_delay_term": max((r["delay_term"] for r in rows), default=None)}


def _exact(row: dict) -> dict:
    """One delay's quadratic class, summarised: outcome, and per P (contraction, invariance) its outcome, bound on
    sup F, SOCPs and the units not proved (subsystem, piece, outcome, F at the witness)."""
    runs = {name: {"outcome": r["outcome"], "sup_bound": r["sup_bound"], "solves": r["solves"],
                   "not_proved": [(u["subsystem"], u["piece"], u["outcome"], u["violation"]) for u in r["per_unit"]
                                  if u["outcome"] != "proved"]} for name, r in row["runs"].items()}
    return {"outcome": row["outcome"], "runs": runs, "invariance_r": row.get("invariance", {}).get("r")}


def monolithic_rows(mono: dict, main: dict, n_grid: list[int], ring: dict | None = None) -> list[dict]:
    """Per N of the monolithic baselines: the learned monolithic certificate's verification row ("mono"), the
    ring-wide query of the compositional certificate's own max_i V(x_i) ("ring", (R) of ring.py) and the whole-ring
    quadratic Razumikhin LMI ("lmi", (Q)) from the verify_ring stage's ``ring`` (None: absent), and the compositional
    certificate's on the same ring (the prefix of the first delay's run for N >= 3, where the prefix ring has exactly
    its queries; the verify_mono stage's own run for smaller rings)."""
    by_n = {r["n"]: r for r in (ring or {}).get("rows", [])}
    own = {r["n"]: r for r in mono["compositional"]}
    per, seconds = main["per_subsystem"], main["timing"]["seconds"]
    rows = []
    for m in mono["monolithic"]:
        n = m["n"]
        if n in own:
            comp = own[n]
        else:
            comp = {"n": n, "verified": all(q["verified"] for q in per[:n]),
                    **{k: sum(q[k] for q in per[:n]) for k in ("cells", "milps", "milp_nodes", "lp_iterations",
                                                              "bounds")},
                    "seconds": main["timing"]["constants_seconds"] + sum(seconds[:n])}
        rows.append({"n": n, "mono": m, "comp": comp} | ({"ring": by_n[n]["ring"], "lmi": by_n[n]["lmi"]}
                                                           if n in by_n else {}))
    return rows


def evaluate_networks(runs: dict[str, list[dict]], lmi: dict[str, list[dict]], quadratic: dict[str, list[dict]],
                      mono: dict[str, dict], trained: dict[str, dict], control: dict[str, dict],
                      control_costs: dict[str, dict],
                      folder: Callable[[str, str], Path], n_grid: list[int], taus: list[int], mono_grid: list[int],
                      ev: EvaluationParams, seed: int, ring: dict[str, dict] | None = None) -> NetworkResults:
    """``runs``/``lmi``/``quadratic``/``mono``/``trained``/``control``/``control_costs``: per system, the verify
    stage's run summaries and LMI rows, the verify_quadratic stage's exact check of each delay's V_P, the
    verify_mono stage's results, the train stage's CEGIS summary, the control stage's study and its controllers'
    held-out costs per scenario (``held_out_costs``);
    ``folder(system, name)``: a certificate folder (name ``<system>_control``: the certified controller's).
    Falsification uses a tenth of ``ev.falsify_samples`` per subsystem."""
    scal, slopes, by_name, neural, lmi_ok, lmi_feasible, exact, cases, mono_rows = {}, {}, {}, {}, {}, {}, {}, {}, {}
    full_refuted, verified = [], []
    for system in SYSTEMS:
        named = {r["name"]: r for r in runs[system]}
        main = named[f"{system}_tau{taus[0]}_reach"]
        scal[system] = prefix_scaling(main["per_subsystem"], main["timing"]["seconds"],
                                      main["timing"]["constants_seconds"], n_grid)
        slopes[system] = loglog_slope(scal[system]["n"], scal[system]["bounds"])
        lmi_rows = {row["tau"]: row for row in lmi[system]}
        for tau in taus:
            name = f"{system}_tau{tau}_reach"
            neural[f"{system}_tau{tau}"] = named[name]["verified"]
            cex = read_table(folder(system, name) / COUNTEREXAMPLES_FILE).to_pylist()
            feat = read_json(folder(system, name) / META_FILE)["arch"]["feat"]
            rounds = int(trained[system][f"tau{tau}_cegis_rounds_run"])
            cases[f"{system}_tau{tau}"] = _case(named[name], cex, feat, rounds, lmi_rows.get(tau))
        lmi_ok |= {f"{system}_tau{row['tau']}": row["verified"] for row in lmi[system]}
        lmi_feasible |= {f"{system}_tau{row['tau']}": row["P"] is not None for row in lmi[system]}
        exact |= {f"{system}_tau{row['tau']}": _exact(row) for row in quadratic[system]}
        full_refuted.append(not named[f"{system}_tau{taus[0]}_full"]["verified"] and main["verified"])
        by_name |= named
        verified += [folder(system, name) for name, r in named.items() if r["verified"]]
        if control[system]["certified_alpha"] is not None:
            verified.append(folder(system, f"{system}_control"))
        mono_rows[system] = monolithic_rows(mono[system], main, mono_grid, (ring or {}).get(system))
    falsified = {f.name: falsify_folder(f, ev.falsify_samples // 10, ev.falsify_steps, seed) for f in verified}
    simulated = {f.name: siss_simulation(f, ev.sim_steps, ev.n_sims, seed) for f in verified}
    return NetworkResults(scal, slopes, by_name, neural, lmi_ok, lmi_feasible, exact, cases, full_refuted, falsified,
                          simulated, mono_rows, control, control_costs)
