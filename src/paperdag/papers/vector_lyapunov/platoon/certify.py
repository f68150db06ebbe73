"""Platoon certificate artifacts: verify a vector certificate follower by follower, write its certificate folder
(verifier/folder.py) and load it back; ``paperdag verify`` re-verifies it from the folder alone (reverify.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from paperdag.io import load_tensors, read_json, save_tensors

from ..lyapunov import level_constants
from ..params import BudgetParams, CertificateParams, PolicyParams
from ..verifier import bab
from ..verifier.folder import write_certificate_folder
from ..verifier.record import Sense
from .certificate import Policy, VectorCert, build_models, decrease
from .domain import reach_bounds, vector_property
from .model import Platoon


def arch_json(cert: CertificateParams, policy: PolicyParams) -> dict:
    """The architecture stored beside the weights (train info and certificate meta)."""
    return {"certificate": cert.model_dump(), "policy": policy.model_dump()}


def model_tensors(vc: VectorCert, policy: Policy) -> dict[str, torch.Tensor]:
    """Both models' state dicts as one flat tensor dict (``cert.*``, ``policy.*``)."""
    return ({f"cert.{k}": v for k, v in vc.state_dict().items()}
            | {f"policy.{k}": v for k, v in policy.state_dict().items()})


def save_models(path: Path, vc: VectorCert, policy: Policy) -> None:
    """Both models in one safetensors file (``model_tensors``)."""
    save_tensors(path, model_tensors(vc, policy))


def load_models(path: Path, arch: dict, pl: Platoon) -> tuple[VectorCert, Policy]:
    """The models saved by ``save_models`` (architecture as written by ``arch_json``)."""
    vc, policy = build_models(CertificateParams(**arch["certificate"]), PolicyParams(**arch["policy"]), pl.box)
    t = load_tensors(path)
    vc.load_state_dict({k[5:]: v for k, v in t.items() if k.startswith("cert.")})
    policy.load_state_dict({k[7:]: v for k, v in t.items() if k.startswith("policy.")})
    return vc, policy


def load_trained(weights_path: Path, info_path: Path, pl: Platoon) -> tuple[VectorCert, Policy, dict]:
    """(certificate, controller, architecture) of a training run: its weights and its info JSON (with "arch")."""
    arch = read_json(info_path)["arch"]
    return *load_models(weights_path, arch, pl), arch


def summary_constants(vc: VectorCert, policy: Policy, pl: Platoon) -> dict:
    """The constants summary.json records: Delta [N, 2] (exact MILPs, ``reach_bounds``), c_0 = min and c_1 = max of
    the followers' level constants (exact MILPs), rho, the largest ISS gain gamma_max and comparison row sum,
    w_certified = min(w_bar, (1 - rho) c_0 / (2 gamma_max)) (two disturbance channels, w_i and w_p), and whether the OVM clip is inactive on the box."""
    delta = reach_bounds(policy, pl)
    consts = [level_constants(V, np.array(pl.box)) for V in vc.V]
    c_0, c_1 = min(c[0] for c in consts), max(c[1] for c in consts)
    gamma = float(vc.gamma().max().detach())
    return {"c_0": c_0, "c_1": c_1, "rho": vc.rho, "gamma_max": gamma, "delta": delta.tolist(),
            "rows_sum_max": float(vc.rows().sum(-1).max().detach()),
            "w_certified": float(min(pl.w_bound, (1 - vc.rho) * c_0 / (2 * gamma))),
            "ovm_linear_on_box": pl.ovm_linear_on_box()}


# the direction in which each stored constant is sound (verifier/record.py); ovm_linear_on_box as 0 / 1
SOUND_AS: dict[str, Sense] = {"c_0": "lower", "c_1": "upper", "delta": "upper", "w_certified": "lower",
                              "gamma_max": "upper", "rho": "upper", "rows_sum_max": "upper",
                              "ovm_linear_on_box": "lower"}


def verify_vector(vc: VectorCert, policy: Policy, pl: Platoon, reach: bool, budget: BudgetParams,
                  progress: Callable[[Iterable[int]], Iterable[int]] = iter, consts: dict | None = None) -> dict:
    """Verify condition (C) for every follower of ``pl`` compositionally (the constants ``consts`` of
    ``summary_constants``, computed here if None, then branch and bound + MILP per follower under the deterministic
    ``budget``); returns summary (a function of the certificate and the budget), cell rows, counterexamples and
    ``timing`` (wall-clock seconds, reported only)."""
    t0 = time.perf_counter()
    consts = summary_constants(vc, policy, pl) if consts is None else consts
    delta, c_0 = np.array(consts["delta"]), consts["c_0"]
    t_const = time.perf_counter() - t0
    rows, cex, per, seconds = [], [], [], []
    for i in progress(range(pl.n)):
        prop = vector_property(vc, policy, pl, i, delta if reach else None, c_0)
        res = bab.verify(prop, budget.max_cells, budget.max_depth, max_milp=budget.max_milp,
                         milp_nodes=budget.milp_nodes, stop_after_cex=budget.stop_after_cex)
        rows += [{"vehicle": i} | r for r in res.rows]
        for z in res.counterexamples:
            G, level = decrease(vc, policy, pl, np.array([i]), torch.as_tensor(z[None]), c_0)
            cex.append({"vehicle": i, "z": z.tolist(), "G_compiled": float(prop.net(z[None])[0, 0]),
                        "G_torch": float(G.detach()[0]), "level": float(level.detach()[0])})
        per.append({"vehicle": i, "verified": res.verified, **res.work(), "leaves": len(res.rows),
                    "milp_cells": res.count("proved_milp"), "refuted_cells": res.count("refuted"),
                    "unknown_cells": res.count("unknown")})
        seconds.append(res.seconds)
    summary = {"verified": all(p["verified"] for p in per), "reach": reach, "per_vehicle": per, **consts}
    return {"summary": summary, "rows": rows, "counterexamples": cex,
            "timing": {"constants_seconds": t_const, "seconds": seconds}}


def problem_data(pl: Platoon, reach: bool) -> dict:
    """The problem a platoon certificate is about: the platoon's vehicles, gains, physics, dt, tau, the state box,
    w_bar and the delay domain's kind (meta.json holds it; summary.json its digest)."""
    return pl.to_json() | {"reach": reach}


def write_certificate(out: Path, vc: VectorCert, policy: Policy, pl: Platoon, arch: dict, budget: BudgetParams,
                      result: dict) -> None:
    """The certificate folder of ``verify_vector``'s ``result``."""
    meta = {"platoon": pl.to_json(), "arch": arch, "budget": budget.model_dump(), "reach": result["summary"]["reach"]}
    write_certificate_folder(out, model_tensors(vc, policy), meta, problem_data(pl, meta["reach"]), "vehicle",
                             result["rows"], result["counterexamples"], ("z", "G_compiled", "G_torch", "level"),
                             result["summary"])


@dataclass(frozen=True)
class Certificate:
    """A verified (or refuted) platoon certificate as read back from its folder."""

    pl: Platoon
    vc: VectorCert
    policy: Policy
    reach: bool
    budget: BudgetParams
    summary: dict


def load_certificate(meta_path: Path, weights_path: Path, summary_path: Path) -> Certificate:
    """The certificate of a folder's meta.json, weights and summary.json."""
    meta = read_json(meta_path)
    pl = Platoon.from_json(meta["platoon"])
    vc, policy = load_models(weights_path, meta["arch"], pl)
    return Certificate(pl, vc, policy, meta["reach"], BudgetParams(**meta["budget"]), read_json(summary_path))
