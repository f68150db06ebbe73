"""Stage ``evaluate``: exact base-model and target metrics by enumeration, across-seed summaries of every method,
the claims (claims.py) and the figures (plots.py)."""

from __future__ import annotations

import numpy as np

from paperdag.claims import write_metrics
from paperdag.io import load_tensors, read_table, save_figure, write_table
from paperdag.stage import StageContext

from . import exact
from .claims import claims
from .data import load_task
from .finetune import CURVE_FILE, FINAL_FILE
from .params import Params
from .plots import plot_kl_curves, plot_lengths, plot_pareto
from .policy import build_model
from .prepare import PROMPTS_FILE
from .pretrain import BASE_FILE
from .stats import mean_ci, spread_by_step
from .task import all_responses, data_log_probs

KEYS = ("accuracy", "entropy", "length", "kl")


def evaluate(ctx: StageContext[Params], methods: list[str]) -> dict[str, float]:
    """metrics.json, methods.parquet (one row per method: means and intervals) and three plots."""
    p, t = ctx.params, ctx.params.task
    task = load_task(ctx.input("prepare", PROMPTS_FILE), t.modulus, t.max_len, t.guess_bias)
    model = build_model(task, p.model.d_model, p.model.n_layer, p.model.n_head)
    model.load_state_dict(load_tensors(ctx.input("train_base", BASE_FILE)))
    log_base, n_tokens = exact.log_probs(model, task), (all_responses(task)[1] + 1).double()
    base, h = exact.metrics(log_base, task), exact.base_rate(log_base, n_tokens)
    log_d = data_log_probs(task)
    n_responses = log_d.shape[1]
    sanity = {"kl_data_base": float((log_d.exp() * (log_d - log_base)).sum(1).mean()),
              "kl_data_uniform": float((log_d.exp() * (log_d + np.log(n_responses))).sum(1).mean()),
              "acc_uniform": (n_responses - 1) / n_responses / t.modulus}

    s, targets, curves, dists = {}, {}, {}, {"base": exact.length_distribution(log_base, task)}
    for m in methods:
        final = read_table(ctx.input(f"finetune_{m}", FINAL_FILE))
        s[m] = {k: mean_ci(final[k].to_numpy(), p.claims.confidence) for k in KEYS}
        dists[m] = np.mean(np.array(final["length_dist"].to_pylist()), 0)
        if m.startswith("tb_"):
            kind, power = m.split("_")[1], m.split("_")[2]
            log_target = exact.target(kind, log_base, n_tokens, getattr(p.alpha, power), h)
            targets[m] = exact.metrics(log_target, task) | {"kl_base": exact.metrics(log_base, task, log_target)["kl"]}
            curve = read_table(ctx.input(f"finetune_{m}", CURVE_FILE))
            curves[m] = spread_by_step(curve["step"].to_numpy(), curve["kl"].to_numpy())
    baseline_only = [k for k in KEYS if k != "kl"]
    write_table(ctx.output("methods.parquet"), {
        "method": methods, **{f"{k}_{v}": [getattr(s[m][k], v) for m in methods] for k in KEYS
                              for v in ("mean", "lo", "hi")}})
    metrics = {f"{k[:3]}_base": base[k] for k in baseline_only} | sanity
    metrics |= {f"{k[:3]}_{m}": s[m][k].mean for m in methods for k in KEYS if m.startswith("tb_") or k != "kl"}
    metrics |= {f"target_{k[:3]}_{m}": v[k] for m, v in targets.items() for k in baseline_only}
    save_figure(plot_kl_curves(curves), ctx.output("kl_curves.png"))
    save_figure(plot_pareto(s, base, targets), ctx.output("pareto.png"))
    save_figure(plot_lengths(dists), ctx.output("lengths.png"))
    write_metrics(ctx.out, metrics, claims(s, base, targets, sanity, p.claims))
    return {k: float(v) for k, v in metrics.items()}
