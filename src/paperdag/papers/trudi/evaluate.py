"""Stage ``evaluate``: the across-seed summaries (analysis.py), each simulator's baseline ladder (prepare's zero- and
random-action returns, the baselines stage's scripted and searched controllers per seed), the claims (claims.py) and the figures
(plots.py)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from paperdag.claims import write_metrics
from paperdag.io import read_json, read_table, save_figure, write_table
from paperdag.stage import StageContext

from .analysis import STABILITY, summarise
from .baselines import BASELINES_FILE
from .claims import claims
from .params import ENVS, Params
from .plots import plot_detour_actions, plot_epsilon_sweep, plot_kl, plot_returns
from .prepare import SPECS_FILE, THROUGHPUT_FILE


def headline_metrics(s: dict) -> dict[str, float]:
    """Means over seeds of the summaries ``s`` (analysis.summarise) for the metrics file (the claims judge intervals;
    ``*_clip`` is the clip ablation's, judged by none)."""
    st, det = s["stress"], s["detour"]
    metrics = {f"stress_max_kl_{m}": st[f"max_kl_{m}"].mean() for m in STABILITY}
    metrics |= {f"stress_mean_kl_{m}": st[f"mean_kl_{m}"].mean() for m in STABILITY}
    metrics |= {f"stress_return_drop_{m}": st[f"drop_{m}"].mean() for m in STABILITY}
    metrics |= {f"stress_return_trudi_minus_{m}": (st["return_trudi"] - st[f"return_{m}"]).mean()
                for m in STABILITY[1:]}
    metrics |= {"detour_coverage_trudi": det["coverage_trudi"].mean(), "detour_coverage_gauss": det["coverage_gauss"]
                .mean(), "detour_return_trudi_minus_gauss": (det["return_trudi"] - det["return_gauss"]).mean()}
    metrics |= {f"{e}_return_trudi_minus_gauss": (v["return_trudi"] - v["return_gauss"]).mean()
                for e, v in s["par"].items()}
    metrics |= {f"{e}_mean_kl_{m}": v[f"mean_kl_{m}"].mean() for e, v in s["par"].items() for m in ("trudi", "gauss")}
    return metrics


def ladder(specs: dict, controller: dict, stress_env: str) -> dict[str, dict[str, float | np.ndarray]]:
    """Per simulator, and under "stress" for the stress runs' fresh seeds on ``stress_env``: the zero- and uniform
    random-action policies' returns and the scripted and searched controllers' per-seed returns (seeds 0, 1, ... in
    order)."""
    out = {}
    for key, v in (*specs.items(), ("stress", specs[stress_env])):
        row = controller[key]
        if row["seeds"] != list(range(len(row["seeds"]))):
            raise ValueError(f"the controller on {key} ran seeds {row['seeds']}, not 0, 1, ...")
        out[key] = {"zero-action policy": v["zero_return"], "uniform random-action policy": v["random_return"],
                    "scripted controller": np.asarray(row["scripted"]),
                    "random-search linear controller": np.asarray(row["controller"])}
    return out


def evaluate(ctx: StageContext[Params], runs: list[str]) -> dict[str, float]:
    """metrics.json, evals.parquet (every seed of every configuration) and four figures."""
    p = ctx.params
    evals = pa.concat_tables([read_table(ctx.input(r, "evals.parquet")) for r in runs], promote_options="default")
    curves = pa.concat_tables([read_table(ctx.input(r, "curves.parquet")) for r in runs])
    write_table(ctx.output("evals.parquet"), evals)
    specs = read_json(ctx.input("prepare", SPECS_FILE))["envs"]
    trivial = {e: max(v["zero_return"], v["random_return"]) for e, v in specs.items()}
    s = summarise(evals, curves, read_table(ctx.input("prepare", THROUGHPUT_FILE)),
                  {"stress": p.stress_env, "sweep": p.sweep_env}, trivial,
                  (p.claims.plateau_window, p.claims.plateau_min_iterations, p.claims.plateau_sweep),
                  specs["detour"]["routes"])
    actions = {m: np.array(read_table(ctx.input(f"train_detour_{m}", "actions.parquet")).to_pandas())
               for m in ("trudi", "gauss")}
    save_figure(plot_returns(curves, ENVS), ctx.output("returns.png"))
    save_figure(plot_kl(curves, p.stress_env, (p.lr, p.stress_lr)), ctx.output("kl_per_update.png"))
    save_figure(plot_detour_actions(actions), ctx.output("detour_actions.png"))
    save_figure(plot_epsilon_sweep(s["sweep"]), ctx.output("epsilon_sweep.png"))
    metrics = headline_metrics(s)
    rungs = ladder(specs, read_json(ctx.input("baselines", BASELINES_FILE)), p.stress_env)
    metrics |= {f"{env}_{k}_return": float(np.mean(r[name])) for env, r in rungs.items()
                for k, name in (("controller", "random-search linear controller"), ("scripted", "scripted controller"))}
    for setting in ("base", "stress"):  # DPPO's KL stop: share of (seed, iteration) updates it ended, steps taken
        rows = [r for r in curves.to_pylist() if (r["method"], r["setting"]) == ("dppo", setting)]
        metrics[f"dppo_kl_stop_rate_{setting}"] = float(np.mean([r["kl_stop"] for r in rows]))
        metrics[f"dppo_steps_per_iteration_{setting}"] = float(np.mean([r["updates"] for r in rows]))
    verdicts = claims(s, rungs, p.claims, p.plans)
    write_metrics(ctx.out, metrics, verdicts)
    return metrics
