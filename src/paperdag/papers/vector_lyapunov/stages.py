"""Stage functions: prepare -> train (vector / full-domain vector / uncertified / monolithic) -> verify -> evaluate."""

from __future__ import annotations

import time

import numpy as np
import torch

from paperdag.io import read_json, write_json
from paperdag.stage import StageContext

from . import bab
from .certificate import Policy
from .certify import (ARCH_KEYS, BUDGET_KEYS, load_models, platoon_from_json, platoon_to_json, save_models,
                      verify_vector, write_certificate)
from .domain import level_constants, reach_bounds
from .mono import MonoCert, mono_property, train_mono
from .pipeline import SYSTEM_KEYS
from .train import train_uncertified, train_vector

PLATOON_KEYS = ("n_grid", "tau", "dt", "cav_period", "alpha_range", "beta_range", "v_max", "s_go", "s_st", "v_star",
                "s_bound", "v_bound", "w_bound", "cav_gains")


def _gen(ctx: StageContext) -> torch.Generator:
    torch.set_num_threads(1)
    return torch.Generator().manual_seed(int(ctx.rng.integers(2**31)))


def _platoon(ctx: StageContext):
    return platoon_from_json(read_json(ctx.inputs["prepare"] / "platoon.json"))


def prepare(ctx: StageContext) -> dict[str, float]:
    """Draw the platoon of max(n_grid) followers (platoon N = its first N followers)."""
    from .network import draw_networks
    from .platoon import make_platoon

    p = {k: getattr(ctx.params, k) for k in PLATOON_KEYS}
    pl = make_platoon(p, max(p["n_grid"]), ctx.rng)
    if not pl.ovm_linear_on_box():
        raise ValueError("the optimal-velocity clip must be inactive on the spacing box (see platoon.py)")
    write_json(ctx.out / "platoon.json", platoon_to_json(pl))
    q = {k: getattr(ctx.params, k) for k in SYSTEM_KEYS + ("net_n_grid",)}
    write_json(ctx.out / "networks.json", draw_networks(q, ctx.rng))
    return {"n_followers": pl.n, "n_cav": int(pl.is_cav.sum())}


def _train_vector(ctx: StageContext, reach: bool) -> dict[str, float]:
    pl = _platoon(ctx)
    vc, policy, info = train_vector(pl, ctx.params, reach, _gen(ctx), ctx.log_metric)
    save_models(ctx.out / "weights.safetensors", vc, policy)
    write_json(ctx.out / "train.json", info | {"arch": {k: getattr(ctx.params, k) for k in ARCH_KEYS}})
    return info


def train_reach(ctx: StageContext) -> dict[str, float]:
    """CEGIS on the reachability-constrained delay domain (the paper's method)."""
    return _train_vector(ctx, reach=True)


def train_full(ctx: StageContext) -> dict[str, float]:
    """Baseline: CEGIS on the full delay domain (no reachability constraint)."""
    return _train_vector(ctx, reach=False)


def train_uncert(ctx: StageContext) -> dict[str, float]:
    """Baseline: neural CAV controller trained for performance only (no certificate)."""
    pl = _platoon(ctx).first(min(4, max(ctx.params.n_grid)))
    policy = train_uncertified(pl, ctx.params, _gen(ctx), ctx.log_metric)
    torch.save(policy.state_dict(), ctx.out / "policy.pt")
    return {"policy_params": sum(p.numel() for p in policy.parameters())}


def _load_vector(path, pl):
    arch = read_json(path / "train.json")["arch"]
    return load_models(path / "weights.safetensors", arch, pl), arch


def train_monolithic(ctx: StageContext) -> dict[str, float]:
    """Baseline: one scalar certificate per platoon size, for the certified controller."""
    pl_all = _platoon(ctx)
    (_, policy), _ = _load_vector(ctx.inputs["train_reach"], pl_all)
    gen = _gen(ctx)
    out, states = {}, {}
    for n in ctx.params.mono_n_grid:
        pl = pl_all.first(n)
        mc, c0 = train_mono(pl, policy, reach_bounds(policy, pl), ctx.params, gen, ctx.log_metric)
        states[n] = mc.state_dict()
        out[f"c0_estimate_{n}"] = c0
    torch.save(states, ctx.out / "mono.pt")
    return out


def _verify(ctx: StageContext, upstream: str, reach: bool) -> dict[str, float]:
    pl = _platoon(ctx)
    (vc, policy), arch = _load_vector(ctx.inputs[upstream], pl)
    budget = {k: getattr(ctx.params, k) for k in BUDGET_KEYS}
    res = verify_vector(vc, policy, pl, reach, budget, lambda it: ctx.progress(it, desc="followers"))
    write_certificate(ctx.out, vc, policy, pl, arch, budget, res)
    s = res["summary"]
    return {"verified": float(s["verified"]), "followers_verified": sum(p["verified"] for p in s["per_vehicle"]),
            "cells": sum(p["cells"] for p in s["per_vehicle"]), "counterexamples": len(res["counterexamples"]),
            "seconds": sum(p["seconds"] for p in s["per_vehicle"]) + s["constants_seconds"]}


def verify_reach(ctx: StageContext) -> dict[str, float]:
    """Compositional verification on the reachability-constrained delay domain -> certificate folder."""
    return _verify(ctx, "train_reach", reach=True)


def verify_full(ctx: StageContext) -> dict[str, float]:
    """Compositional verification of the full-domain baseline on the full delay domain."""
    return _verify(ctx, "train_full", reach=False)


def verify_monolithic(ctx: StageContext) -> dict[str, float]:
    """Verify the monolithic certificate for each N with a wall-clock timeout (same sound verifier)."""
    pl_all = _platoon(ctx)
    (_, policy), _ = _load_vector(ctx.inputs["train_reach"], pl_all)
    rows, states = [], torch.load(ctx.inputs["train_monolithic"] / "mono.pt")
    for n in ctx.params.mono_n_grid:
        pl = pl_all.first(n)
        mc = MonoCert(pl, ctx.params.mono_hidden, ctx.params.mono_feat, ctx.params.cert_eps, ctx.params.rho)
        mc.load_state_dict(states[n])
        t0 = time.perf_counter()
        c_0, _ = level_constants(mc.V, np.array(pl.box * n), exact=False)
        left = ctx.params.mono_timeout - (time.perf_counter() - t0)
        res = bab.verify(mono_property(mc, policy, pl, reach_bounds(policy, pl), c_0), ctx.params.max_cells * 100,
                         ctx.params.max_depth, max_milp=ctx.params.max_milp,
                         milp_time=min(ctx.params.milp_time, max(left, 0.1)), time_budget=left,
                         stop_after_cex=ctx.params.stop_after_cex)
        seconds = time.perf_counter() - t0
        rows.append({"n": n, "verified": res.verified, "seconds": seconds, "cells": len(res.rows),
                     "refuted_cells": res.count("refuted"), "unknown_cells": res.count("unknown"),
                     "timed_out": seconds >= ctx.params.mono_timeout, "c_0": c_0,
                     "counterexamples": [z.tolist() for z in res.counterexamples[:20]]})
    write_json(ctx.out / "monolithic.json", rows)
    return {f"mono_seconds_{r['n']}": r["seconds"] for r in rows}


def uncertified_policy(path, p) -> Policy:
    policy = Policy(p.policy_hidden, p.u_scale)
    policy.load_state_dict(torch.load(path / "policy.pt"))
    return policy

