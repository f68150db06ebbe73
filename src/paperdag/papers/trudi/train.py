"""Stage ``train_*``: one method's configuration(s) over seeds (experiment.py), its curves, evaluations and weights.

setting "main": simulator ``env`` at lr; TruDi there at a matched step size: epsilon = Gaussian PPO's mean per-update
KL on the same simulator (the mean over its seeds, read from its stage), the chain KL bounding the action KL (data
processing), so TruDi's actions move at most as far per update as Gaussian PPO's. "base" / "stress": the stability
simulator at (lr, epsilon) / (stress_lr, epsilon), TruDi there on stress_seeds (its competence; seed i is the same run
at any seed count, ppo.py); "sweep": TruDi on the sweep simulator at every epsilon of
sweep_epsilons.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from paperdag.io import read_json, read_table, save_tensors, write_table
from paperdag.stage import StageContext

from .experiment import run_config
from .params import Params
from .prepare import SPECS_FILE


def train(ctx: StageContext[Params], method: str, setting: str, env: str = "") -> dict[str, float]:
    """curves.parquet (seed, iteration, env_steps, return, kl), evals.parquet (per seed, beside the zero-action
    return), actions.parquet (detour first actions of seed 0), weights.safetensors; returns the mean final
    training return."""
    p = ctx.params
    env = {"main": env, "base": p.stress_env, "stress": p.stress_env, "sweep": p.sweep_env}[setting]
    lr = p.stress_lr if setting == "stress" else p.lr
    grid = p.sweep_epsilons if setting == "sweep" else [p.epsilon]
    seeds = p.stress_seeds if (setting, method) == ("stress", "trudi") else p.seeds
    if (setting, method) == ("main", "trudi"):
        grid = [float(np.mean(read_table(ctx.input(f"train_{env}_gauss", "evals.parquet")).column("mean_kl")))]
    curves, evals, weights, actions = [], [], {}, None
    for j, eps in enumerate(grid):
        res = run_config(env, method, p.policy, p.ppo, lr, eps, seeds, p.seed, p.eval_episodes, ctx.device,
                         lambda i, n, j=j: ctx.report(f"{env} {method} eps#{j}", i, n),
                         p.stress_seed_offset if setting == "stress" else 0)
        curves += res["curves"]
        evals += res["evals"]
        weights |= {f"eps{j}.{k}": v for k, v in res["weights"].items()}
        actions = res["actions"] if actions is None else actions
        for row in res["curves"]:
            ctx.log_metric("return", row["return"], row["env_steps"], run=f"{method}-seed{row['seed']}-eps{eps:g}")
    zero = read_json(ctx.input("prepare", SPECS_FILE))["envs"][env]["zero_return"]
    meta = {"env": env, "method": method, "setting": setting, "lr": lr, "zero_return": zero}
    write_table(ctx.output("curves.parquet"), pa.Table.from_pylist([r | meta for r in curves]))
    write_table(ctx.output("evals.parquet"), pa.Table.from_pylist([r | meta for r in evals]))
    write_table(ctx.output("actions.parquet"), {"a0": actions[:, 0].tolist() if actions.numel() else [],
                                                 "a1": actions[:, 1].tolist() if actions.numel() else []})
    save_tensors(ctx.output("weights.safetensors"), weights, metadata={k: str(v) for k, v in meta.items()})
    return {"final_return": sum(e["final_train_return"] for e in evals) / len(evals)}
