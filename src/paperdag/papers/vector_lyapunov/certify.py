"""Certificate artifacts: verify a vector certificate follower by follower, write the folder, re-verify it.

A certificate folder holds ``weights.safetensors`` (certificates V_HDV, V_CAV, comparison logits, gains, residual
controller), ``meta.json`` (platoon, architecture, domain kind, verifier budgets), ``cells.parquet`` (every leaf
cell of every follower's branch and bound: box, status, bound), ``counterexamples.parquet`` and ``summary.json``
(per-follower verdict, time, cells; the constants c_0, c_1, rho, gamma, Delta of the sISS bound).
``reverify(cert_dir)`` rebuilds everything from the weights alone and re-runs the sound verifier.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from paperdag.io import read_json, read_table, write_json, write_table

from . import bab
from .certificate import Policy, VectorCert, decrease
from .domain import level_constants, reach_bounds, vector_property
from .platoon import Platoon

ARCH_KEYS = ("cert_hidden", "cert_feat", "cert_eps", "rho", "policy_hidden", "u_scale")
BUDGET_KEYS = ("max_cells", "max_depth", "max_milp", "milp_time", "vehicle_time", "stop_after_cex")


def platoon_to_json(pl: Platoon) -> dict:
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in pl.__dict__.items()}


def platoon_from_json(d: dict) -> Platoon:
    d = dict(d)
    for k in ("is_cav", "alpha", "beta"):
        d[k] = np.asarray(d[k], dtype=bool if k == "is_cav" else np.float64)
    d["box"], d["gains"] = tuple(d["box"]), tuple(d["gains"])
    return Platoon(**d)


def build_models(arch: dict, pl: Platoon) -> tuple[VectorCert, Policy]:
    vc = VectorCert(pl.box, arch["cert_hidden"], arch["cert_feat"], arch["cert_eps"], arch["rho"])
    return vc, Policy(arch["policy_hidden"], arch["u_scale"])


def save_models(path: Path, vc: VectorCert, policy: Policy) -> None:
    tensors = {f"cert.{k}": v.contiguous() for k, v in vc.state_dict().items()}
    tensors |= {f"policy.{k}": v.contiguous() for k, v in policy.state_dict().items()}
    save_file(tensors, str(path))


def load_models(path: Path, arch: dict, pl: Platoon) -> tuple[VectorCert, Policy]:
    vc, policy = build_models(arch, pl)
    t = load_file(str(path))
    vc.load_state_dict({k[5:]: v for k, v in t.items() if k.startswith("cert.")})
    policy.load_state_dict({k[7:]: v for k, v in t.items() if k.startswith("policy.")})
    return vc, policy


def verify_vector(vc: VectorCert, policy: Policy, pl: Platoon, reach: bool, budget: dict, progress=iter) -> dict:
    """Verify every follower of ``pl`` compositionally; returns summary, cell rows and counterexamples."""
    t0 = time.perf_counter()
    delta = reach_bounds(policy, pl)
    box = np.array(pl.box)
    consts = [level_constants(V, box) for V in vc.V]
    c_0, c_1 = min(c[0] for c in consts), max(c[1] for c in consts)
    t_const = time.perf_counter() - t0
    rows, cex, per = [], [], []
    for i in progress(range(pl.n)):
        prop = vector_property(vc, policy, pl, i, delta if reach else None, c_0)
        res = bab.verify(prop, budget["max_cells"], budget["max_depth"], max_milp=budget["max_milp"],
                         milp_time=budget["milp_time"], time_budget=budget["vehicle_time"],
                         stop_after_cex=budget["stop_after_cex"])
        rows += [{"vehicle": i} | r for r in res.rows]
        for z in res.counterexamples:
            G, level = decrease(vc, policy, pl, np.array([i]), torch.as_tensor(z[None]), c_0)
            cex.append({"vehicle": i, "z": z.tolist(), "G_compiled": float(prop.net(z[None])[0, 0]),
                        "G_torch": float(G.detach()[0]), "level": float(level.detach()[0])})
        per.append({"vehicle": i, "verified": res.verified, "seconds": res.seconds, "cells": len(res.rows),
                    "milp_cells": res.count("proved_milp"), "refuted_cells": res.count("refuted"),
                    "unknown_cells": res.count("unknown")})
    gamma = float(vc.gamma().max().detach())
    summary = {
        "verified": all(p["verified"] for p in per), "reach": reach, "per_vehicle": per,
        "c_0": c_0, "c_1": c_1, "rho": vc.rho, "gamma_max": gamma, "delta": delta.tolist(),
        "rows_sum_max": float(vc.rows().sum(-1).max().detach()), "constants_seconds": t_const,
        "w_certified": float(min(pl.w_bound, (1 - vc.rho) * c_0 / gamma)),
        "ovm_linear_on_box": pl.ovm_linear_on_box(),
    }
    return {"summary": summary, "rows": rows, "counterexamples": cex}


def write_certificate(out: Path, vc: VectorCert, policy: Policy, pl: Platoon, arch: dict, budget: dict,
                      result: dict) -> None:
    save_models(out / "weights.safetensors", vc, policy)
    write_json(out / "meta.json", {"platoon": platoon_to_json(pl), "arch": arch, "budget": budget,
                                   "reach": result["summary"]["reach"]})
    rows = result["rows"]
    write_table(out / "cells.parquet", {
        "vehicle": [r["vehicle"] for r in rows], "status": [r["status"] for r in rows],
        "depth": [int(r["depth"]) for r in rows], "bound": [r["bound"] for r in rows],
        "lo": [r["lo"] for r in rows], "hi": [r["hi"] for r in rows]})
    cex = result["counterexamples"]
    write_table(out / "counterexamples.parquet", {
        "vehicle": [c["vehicle"] for c in cex], "z": [c["z"] for c in cex],
        "G_compiled": [c["G_compiled"] for c in cex], "G_torch": [c["G_torch"] for c in cex],
        "level": [c["level"] for c in cex]})
    write_json(out / "summary.json", result["summary"])


def judge_reverification(message: str, fresh_verified: bool, stored_verified: bool, contracts: bool, confirmed: int,
                         stored_cex: int) -> tuple[bool, str]:
    """(ok, message) of a re-verification: ok iff the certificate is freshly proved, its comparison rows contract,
    the stored verdict agrees and every stored counterexample is a real violation; the message says what disagrees."""
    problems = []
    if fresh_verified != stored_verified:
        problems.append(f"verdict differs from the stored one ({stored_verified})")
    if not contracts:
        problems.append("comparison rows do not contract")
    if confirmed != stored_cex:
        problems.append(f"{stored_cex - confirmed} stored counterexamples are not violations")
    message += f"; {confirmed}/{stored_cex} stored counterexamples confirmed"
    if problems:
        message += "; " + "; ".join(problems)
    return bool(fresh_verified and not problems), message


def reverify(cert_dir: Path) -> tuple[bool, str]:
    """Re-verify a certificate folder from its weights: recompute Delta and c_0, rerun branch and bound + MILP for
    every follower, and re-evaluate every stored counterexample with the torch model (network certificate
    folders, ``meta.kind == "network"``, go to ``netcert.reverify_network``). ok (exit 0) iff the
    certificate is freshly proved for every follower with rho < 1 and matches the stored verdict; otherwise the
    message says what was refuted or what disagrees with the stored artifact."""
    cert_dir = Path(cert_dir)
    meta = read_json(cert_dir / "meta.json")
    if meta.get("kind") == "network":
        from .netcert import reverify_network

        return reverify_network(cert_dir)
    stored = read_json(cert_dir / "summary.json")
    pl = platoon_from_json(meta["platoon"])
    vc, policy = load_models(cert_dir / "weights.safetensors", meta["arch"], pl)
    fresh = verify_vector(vc, policy, pl, meta["reach"], meta["budget"])["summary"]
    cex = read_table(cert_dir / "counterexamples.parquet").to_pylist()
    real = 0
    for c in cex:
        G, level = decrease(vc, policy, pl, np.array([c["vehicle"]]), torch.tensor([c["z"]], dtype=torch.float64),
                            fresh["c_0"])
        real += bool(float(G.detach()[0]) > 0 and float(level.detach()[0]) <= fresh["c_0"])
    per = fresh["per_vehicle"]
    msg = (f"{sum(p['verified'] for p in per)}/{len(per)} followers proved "
           f"({sum(p['refuted_cells'] for p in per)} refuted cells, {sum(p['unknown_cells'] for p in per)} unknown) "
           f"on the {'reachability-constrained' if meta['reach'] else 'full'} delay domain; rho={fresh['rho']}, "
           f"c_0={fresh['c_0']:.4g}")
    return judge_reverification(msg, fresh["verified"], stored["verified"], fresh["rows_sum_max"] < 1.0, real,
                                len(cex))
