"""Stage ``prepare``: the simulator specs, the trivial policies' returns and the simulators' kernels per step call."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import pyarrow as pa
import torch

from paperdag.io import write_json, write_table
from paperdag.stage import StageContext

from .envs import SPECS, make_env
from .params import ENVS, Params
from .rollout import constant_action_returns, route_returns
from .throughput import kernels_per_call

SPECS_FILE = "specs.json"
THROUGHPUT_FILE = "throughput.parquet"


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """specs.json (dims, horizon, constants, zero/random-action returns, the detour's scripted one-sided and split
    route returns, provenance), throughput.parquet (kernels per
    step call at every batch size; no wall clock)."""
    p = ctx.params
    gen = torch.Generator(ctx.device).manual_seed(p.seed)
    specs = {}
    for name in ENVS:
        env = make_env(name, 1, ctx.device)
        constants = {k: v for k, v in vars(type(env)).items() if isinstance(v, int | float | tuple) and k[0] != "_"}
        specs[name] = dataclasses.asdict(SPECS[name]) | {"constants": constants} | {
            f"{kind}_return": constant_action_returns(name, p.eval_episodes, gen, ctx.device, action)
            for kind, action in (("zero", 0.0), ("random", None))}
    specs["detour"]["routes"] = {"one_sided": route_returns(p.eval_episodes, 1.0, ctx.device),
                                 "split": route_returns(p.eval_episodes, 0.5, ctx.device)}
    digest = hashlib.sha256(json.dumps(specs, sort_keys=True).encode()).hexdigest()
    write_json(ctx.output(SPECS_FILE), {"envs": specs, "source": "procedural batched torch simulators (envs.py), "
                                        f"torch {torch.__version__}, nothing downloaded", "sha256": digest})
    rows = [{"env": name, "n_envs": n} | kernels_per_call(name, n, ctx.device, p.seed)
            for name in ENVS for n in p.throughput_envs]
    write_table(ctx.output(THROUGHPUT_FILE), pa.Table.from_pylist(rows))
    return {"max_kernels_per_call": max(r["kernels_per_call"] for r in rows)}
