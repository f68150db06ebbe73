"""Stage ``evaluate``: the platoon's and the networks' results (platoon/evaluation.py, networks/evaluation.py), the
claims (claims.py), tables and figures (plots.py)."""

from __future__ import annotations

from pathlib import Path

from paperdag.claims import write_metrics
from paperdag.io import read_json, save_figure, write_table
from paperdag.stage import StageContext

from ..claims import network_claims, platoon_claims
from ..networks.evaluation import evaluate_networks, held_out_costs, level_set
from ..networks.model import SYSTEMS
from ..params import Params
from ..platoon.certify import Certificate, load_certificate
from ..platoon.evaluation import evaluate_platoon
from ..platoon.uncertified import load_uncertified
from ..plots import control_performance, network_certificates, verification_scaling
from ..verifier.folder import META_FILE, SUMMARY_FILE, WEIGHTS_FILE
from .control_network import CONTROL_DIR, CONTROL_FILE
from .prepare import NETWORKS_FILE
from .train_network import NETWORK_TRAIN_FILE
from .train_uncertified import POLICY_FILE
from .verify_mono_network import MONO_RESULTS_FILE
from .verify_ring_network import RING_FILE
from .verify_network import LMI_FILE, RUNS_FILE, VERIFIED_DIR
from .verify_quadratic import QUADRATIC_FILE
from .verify_vector import TIMING_FILE

WORK = ("cells", "milps", "milp_nodes", "lp_iterations", "bounds", "seconds")


def _certificate(ctx: StageContext[Params], stage: str) -> Certificate:
    return load_certificate(ctx.input(stage, META_FILE), ctx.input(stage, WEIGHTS_FILE), ctx.input(stage, SUMMARY_FILE))


def evaluate(ctx: StageContext[Params]) -> dict[str, float]:
    """metrics.json (metrics and claims), scaling/monolithic/control/network_control tables and the three figures."""
    p = ctx.params
    timing = {d: read_json(ctx.input(s, TIMING_FILE)) for d, s in (("reach", "verify"), ("full", "verify_full"))}
    platoon = evaluate_platoon(_certificate(ctx, "verify"), _certificate(ctx, "verify_full"), timing,
                               load_uncertified(ctx.input("train_uncert", POLICY_FILE), p.policy), p.platoon.n_grid,
                               p.evaluation, p.ladder, p.cascade, p.seed)
    runs = {s: read_json(ctx.input(f"verify_{s}", RUNS_FILE))["runs"] for s in SYSTEMS}
    lmi = {s: read_json(ctx.input(f"verify_{s}", LMI_FILE)) for s in SYSTEMS}
    quadratic = {s: read_json(ctx.input(f"verify_quadratic_{s}", QUADRATIC_FILE)) for s in SYSTEMS}
    mono = {s: read_json(ctx.input(f"verify_mono_{s}", MONO_RESULTS_FILE)) for s in SYSTEMS}
    ring = {s: read_json(ctx.input(f"verify_ring_{s}", RING_FILE)) for s in SYSTEMS}
    trained = {s: read_json(ctx.input(f"train_{s}", NETWORK_TRAIN_FILE)) for s in SYSTEMS}
    control_study = {s: read_json(ctx.input(f"control_{s}", CONTROL_FILE)) for s in SYSTEMS}
    draws = read_json(ctx.input("prepare", NETWORKS_FILE))
    costs = {s: held_out_costs(p.networks, p.dt, control_study[s], draws[s], p.evaluation.n_sims,
                               p.evaluation.sim_steps, p.seed) for s in SYSTEMS}

    def folder(system: str, name: str) -> Path:
        if name == f"{system}_control":
            return ctx.input(f"control_{system}", f"{CONTROL_DIR}/{name}")
        return ctx.input(f"verify_{system}", f"{VERIFIED_DIR}/{name}")

    networks = evaluate_networks(runs, lmi, quadratic, mono, trained, control_study, costs, folder, p.networks.n_grid,
                                 p.delays.taus, p.monolithic.n_grid, p.evaluation, p.seed, ring)

    scal, full, control = platoon.reach, platoon.full, platoon.control
    write_table(ctx.output("scaling.parquet"), {
        "system": ["platoon"] * len(scal["n"]) * 2 + [s for s in SYSTEMS for _ in networks.scaling[s]["n"]],
        "certificate": ["vector_reach"] * len(scal["n"]) + ["vector_full"] * len(full["n"])
        + ["vector_reach"] * sum(len(networks.scaling[s]["n"]) for s in SYSTEMS),
        **{k: scal[k] + full[k] + [v for s in SYSTEMS for v in networks.scaling[s][k]]
           for k in ("n", "bounds", "cells", "milp_nodes", "seconds", "verified")}})
    rows = [(s, r) for s in SYSTEMS for r in networks.monolithic[s]]
    write_table(ctx.output("monolithic.parquet"), {
        "system": [s for s, _ in rows], "n": [r["n"] for _, r in rows],
        "mono_outcome": [r["mono"]["outcome"] for _, r in rows],
        **{f"mono_{k}": [float(r["mono"][k]) for _, r in rows] for k in (*WORK, "seconds")},
        "ring_outcome": [r["ring"]["outcome"] for _, r in rows],
        **{f"ring_{k}": [float(r["ring"][k]) for _, r in rows] for k in WORK},
        "lmi_outcome": [r["lmi"]["outcome"] for _, r in rows],
        "lmi_seconds": [float(r["lmi"]["seconds"]) for _, r in rows],
        "comp_verified": [r["comp"]["verified"] for _, r in rows],
        **{f"comp_{k}": [float(r["comp"][k]) for _, r in rows] for k in (*WORK, "seconds")}})
    write_table(ctx.output("control.parquet"), {"controller": list(control),
                                               "rms_spacing": [v["rms_spacing"] for v in control.values()],
                                               "string_ratio": [v["string_ratio"] for v in control.values()]})
    ctl = [(s, name, c) for s in SYSTEMS for name, c in control_study[s]["controllers"].items()]
    write_table(ctx.output("network_control.parquet"), {
        "system": [s for s, _, _ in ctl], "controller": [name for _, name, _ in ctl],
        **{k: [c[k] for _, _, c in ctl] for k in ("J", "rms_q", "rms_v")}})
    tau = p.delays.taus[0]
    level_sets = {s: level_set(folder(s, f"{s}_tau{tau}_reach"), next((r for r in lmi[s] if r["tau"] == tau), None),
                               p.seed) for s in SYSTEMS}
    save_figure(verification_scaling(platoon, networks.scaling, networks.monolithic),
                ctx.output("verification_scaling.png"))
    save_figure(control_performance(control, {s: c["controllers"] for s, c in control_study.items()}),
                ctx.output("control_performance.png"))
    save_figure(network_certificates(level_sets, tau), ctx.output("network_certificates.png"))

    metrics = platoon.metrics() | networks.metrics()
    claims = platoon_claims(platoon, p.claims, p.plans) + network_claims(networks, p.networks.n_grid, p.delays.taus,
                                                                        p.delays.tau_n, p.claims, p.plans)
    write_metrics(ctx.out, metrics, claims)
    return {k: float(v) for k, v in metrics.items()}
