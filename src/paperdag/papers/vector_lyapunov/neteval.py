"""Evaluation of the network systems: scaling of compositional verification in N, delays, the full-domain and LMI
baselines, dense falsification of every verified certificate, and the sISS bound along closed-loop simulations."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from paperdag.claims import Claim
from paperdag.io import read_json

from .netcert import falsify_network, network_from_json, sample_queries
from .network import network_decrease, simulate_network
from .netstages import load_certificate_folder


def prefix_scaling(run: dict, n_grid: list[int]) -> dict[str, list]:
    """Cost of the ring of N = constants + sum of its N subsystem verifications (the first N subsystems of the
    largest ring have exactly the ring-of-N queries)."""
    per = run["per_subsystem"]
    return {"n": list(n_grid),
            "seconds": [run["constants_seconds"] + sum(q["seconds"] for q in per[:n]) for n in n_grid],
            "verified": [all(q["verified"] for q in per[:n]) for n in n_grid]}


def falsify_folder(folder: Path, n: int, steps: int, seed: int) -> dict[str, float]:
    """n uniform queries per subsystem + n projected-gradient starts on the certificate's own domain (c_0, kappa
    and eps as the verifier computed them, from summary.json)."""
    nc, meta = load_certificate_folder(folder)
    net = network_from_json(meta["network"])
    s = read_json(folder / "summary.json")
    c_0, kappa, eps = s["c_0"], s["kappa"], np.array(s["eps"]) if meta["reach"] else None
    g = torch.Generator().manual_seed(seed)
    violations, worst = 0, -np.inf
    with torch.no_grad():
        for i in range(net.n):
            idx = np.full(n, i)
            G, vx, vxd = network_decrease(nc, net, idx, sample_queries(net, nc, idx, eps, c_0, kappa, g), c_0, kappa,
                                          eps is not None)
            G = torch.where((vx <= c_0) & (vxd <= c_0), G, -torch.inf)
            violations += int((G > 0).sum())
            worst = max(worst, float(G.max()) / c_0)
    _, _, G = falsify_network(nc, net, eps, c_0, kappa, n, steps, g)
    return {"violations": violations + int((G > 0).sum()), "worst_G_over_c0": max(worst, float(G.max()) / c_0)}


def siss_simulation(folder: Path, steps: int, n_sims: int, seed: int) -> dict[str, float]:
    """Closed loop of the certified network from random initial states on 0.9 of the level set {V <= c_0}
    (constant pre-history). Two consequences of the certificate, as ratios that must stay <= 1:
    without disturbance  M(k) <= rho^floor(k / (2 tau + 1)) M(0) for k >= 1  (M(k) = max_i V(x_i(k)));
    with |w| <= w_cert = (1 - rho) c_0 / gamma the level set is forward invariant, M(k) <= c_0."""
    nc, meta = load_certificate_folder(folder)
    net = network_from_json(meta["network"])
    s = read_json(folder / "summary.json")
    c_0, rho = s["c_0"], s["rho"]
    w_cert = min(net.w_bound, (1 - rho) * c_0 / s["gamma"])
    g = torch.Generator().manual_seed(seed)
    decay, invariance = 0.0, 0.0
    with torch.no_grad():
        k = torch.arange(steps + 1)
        envelope = rho ** (k // (2 * net.tau + 1)).double()
        for _ in range(n_sims):
            x0 = torch.randn(net.n, 2, generator=g, dtype=torch.float64)
            x0 *= (0.9 * c_0 / nc.V(x0))[:, None]
            M = nc.V(simulate_network(net, x0, torch.zeros(steps, net.n, dtype=torch.float64))).max(-1).values
            decay = max(decay, float((M[1:] / (envelope[1:] * M[0])).max()))  # k >= 1 (k = 0 is 1 by definition)
            ws = (2 * torch.rand(steps, net.n, generator=g, dtype=torch.float64) - 1) * w_cert
            invariance = max(invariance, float(nc.V(simulate_network(net, x0, ws)).max() / c_0))
    return {"decay_ratio": decay, "invariance_ratio": invariance, "w_cert": w_cert}


def level_set_plot(out: Path, inputs: dict[str, Path], tau: int, seed: int) -> None:
    """``network_certificates.png``: per system, the verified level set {V <= c_0} of the neural certificate, the LMI
    quadratic certificate's level set, and subsystem 0's closed-loop trajectory from the neural level set's edge."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 4))
    for ax, system in zip(axes, ("drones", "microgrid")):
        folder = inputs[f"verify_{system}"] / "certificates" / f"{system}_tau{tau}_reach"
        nc, meta = load_certificate_folder(folder)
        net = network_from_json(meta["network"])
        c_0 = read_json(folder / "summary.json")["c_0"]
        S, E = net.box
        q, v = np.meshgrid(np.linspace(-S, S, 201), np.linspace(-E, E, 201))
        with torch.no_grad():
            V = nc.V(torch.as_tensor(np.stack([q, v], -1))).numpy()
        ax.contour(q, v, V, levels=[c_0], colors="C0")
        lmi = next((r for r in read_json(inputs[f"verify_{system}"] / "lmi.json") if r["tau"] == tau), None)
        if lmi and lmi["P"] is not None:
            P = np.array(lmi["P"])
            Q = np.einsum("...i,ij,...j->...", np.stack([q, v], -1), P, np.stack([q, v], -1))
            ax.contour(q, v, np.sqrt(Q), levels=[lmi["c_0"]], colors="C1", linestyles="--")
        g = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            x0 = torch.randn(net.n, 2, generator=g, dtype=torch.float64)
            x0 *= (c_0 / nc.V(x0))[:, None]
            traj = simulate_network(net, x0, torch.zeros(300, net.n, dtype=torch.float64))[:, 0].numpy()
        ax.plot(traj[:, 0], traj[:, 1], color="C2", lw=1)
        ax.set_title(f"{system}, tau={tau}: neural (solid), LMI (dashed), trajectory", fontsize=8)
        ax.set_xlabel("q (position / angle error)"), ax.set_ylabel("v (velocity / frequency error)")
    fig.tight_layout()
    fig.savefig(out / "network_certificates.png", dpi=100)
    plt.close(fig)


def network_claims(inputs: dict[str, Path], p) -> tuple[dict, list[Claim], dict]:
    """Metrics, claims and plot data of the network systems."""
    metrics, claims, plot = {}, [], {}
    neural_ok, lmi_ok = {}, {}
    verified_folders, full_refuted = [], []
    for system in ("drones", "microgrid"):
        d = inputs[f"verify_{system}"]
        runs = {r["name"]: r for r in read_json(d / "summary.json")["runs"]}
        lmi = read_json(d / "lmi.json")
        first = p.net_taus[0]
        main = runs[f"{system}_tau{first}_reach"]
        scal = prefix_scaling(main, p.net_n_grid)
        plot[system] = scal
        slope = float(np.polyfit(np.log(scal["n"]), np.log(scal["seconds"]), 1)[0]) if len(scal["n"]) > 1 else np.nan
        claims.append(Claim(
            f"{system}_verified_all_n",
            f"{system}: the vector certificate (tau={first}) is soundly verified for every N in {p.net_n_grid}",
            "verified for all N", {"verified": scal["verified"], "seconds": scal["seconds"]}, all(scal["verified"])))
        claims.append(Claim(
            f"{system}_time_linear", f"{system}: compositional verification time grows about linearly in N "
            "(log-log slope in [0.5, 1.5])", "about linear", {"slope": slope, "seconds": scal["seconds"]},
            bool(0.5 <= slope <= 1.5)))
        for tau in p.net_taus:
            neural_ok[(system, tau)] = runs[f"{system}_tau{tau}_reach"]["verified"]
        for row in lmi:
            lmi_ok[(system, row["tau"])] = row["verified"]
        full = runs[f"{system}_tau{first}_full"]
        full_refuted.append(not full["verified"] and main["verified"])
        for name, r in runs.items():
            metrics[f"{name}_verified"] = r["verified"]
            metrics[f"{name}_seconds"] = r["constants_seconds"] + sum(q["seconds"] for q in r["per_subsystem"])
            if r["verified"]:
                verified_folders.append(d / "certificates" / name)
        metrics[f"{system}_loglog_slope"] = slope
    per_tau = {f"{s}_tau{t}": v for (s, t), v in neural_ok.items()}
    claims.append(Claim("network_delays_verified", f"the vector certificates are verified for every delay tau in "
                        f"{p.net_taus} (N={p.net_tau_n} for tau > {p.net_taus[0]})", "tau in {1, 2, 3}", per_tau,
                        all(per_tau.values())))
    claims.append(Claim("network_reachability_needed", "with the reachability-constrained delay domain the "
                        "certificate is verified, on the full delay domain it is refuted (drones and microgrid)",
                        "improved verification efficiency", {"full_refuted_and_reach_verified": full_refuted},
                        all(full_refuted)))
    n_neural, n_lmi = sum(neural_ok.values()), sum(lmi_ok.values())
    claims.append(Claim("neural_beats_lmi", "the neural (polyhedral) certificate is verified in at least as many "
                        "(system, tau) cases as the LMI quadratic one, and in every case the LMI one is",
                        "neural more expressive than quadratic",
                        {"neural": per_tau, "lmi": {f"{s}_tau{t}": v for (s, t), v in lmi_ok.items()}},
                        n_neural >= n_lmi and all(neural_ok[k] for k, v in lmi_ok.items() if v)))
    fals = {f.name: falsify_folder(f, p.falsify_samples // 10, p.falsify_steps, p.seed) for f in verified_folders}
    sims = {f.name: siss_simulation(f, p.sim_steps, p.n_sims, p.seed) for f in verified_folders}
    n_viol = sum(v["violations"] for v in fals.values())
    worst_sim = max([max(s["decay_ratio"], s["invariance_ratio"]) for s in sims.values()], default=None)
    claims.append(Claim("network_certificates_hold", "dense random + gradient falsification finds no violation of "
                        "any verified network certificate, and closed-loop simulations respect its decay envelope "
                        "and level-set invariance", "sound",
                        {"searched": list(fals), "violations": n_viol, "max_simulated_ratio": worst_sim},
                        bool(fals) and n_viol == 0 and worst_sim is not None and worst_sim <= 1.0))
    metrics |= {"network_falsify_violations": n_viol, "network_certificates_verified": len(verified_folders)}
    return metrics, claims, plot
