"""Stage ``prepare``: the simulator specs, the trivial policies' returns and the simulator throughput."""

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
from .rollout import constant_action_returns
from .throughput import measure

SPECS_FILE = "specs.json"
THROUGHPUT_FILE = "throughput.parquet"


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """specs.json (dims, horizon, constants, zero/random-action returns, provenance), throughput.parquet."""
    p = ctx.params
    gen = torch.Generator(ctx.device).manual_seed(p.seed)
    specs = {}
    for name in ENVS:
        env = make_env(name, 1, ctx.device)
        constants = {k: v for k, v in vars(type(env)).items() if isinstance(v, int | float | tuple) and k[0] != "_"}
        specs[name] = dataclasses.asdict(SPECS[name]) | {"constants": constants} | {
            f"{kind}_return": constant_action_returns(name, p.eval_episodes, gen, ctx.device, action)
            for kind, action in (("zero", 0.0), ("random", None))}
    digest = hashlib.sha256(json.dumps(specs, sort_keys=True).encode()).hexdigest()
    write_json(ctx.output(SPECS_FILE), {"envs": specs, "source": "procedural batched torch simulators (envs.py), "
                                        f"torch {torch.__version__}, nothing downloaded", "sha256": digest})
    rows = [{"env": name, "n_envs": n} | measure(name, n, p.throughput_steps, ctx.device, p.seed)
            for name in ENVS for n in p.throughput_envs]
    write_table(ctx.output(THROUGHPUT_FILE), pa.Table.from_pylist(rows))
    return {"max_steps_per_second": max(r["steps_per_second"] for r in rows)}
