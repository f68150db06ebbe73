"""Stage ``evaluate``: accuracy, grid, order and cost summaries (analysis.py) against the baselines stage's count
table and oracle order, the claims and the figures."""

from __future__ import annotations

import numpy as np

from paperdag.claims import write_metrics
from paperdag.io import read_json, read_table, save_figure
from paperdag.stage import StageContext

from .analysis import summarise
from .baselines import BASELINES_FILE
from .claims import claims
from .decode import RESULTS_FILE
from .params import Params
from .plots import plot_decoders, plot_grid, plot_orders
from .train import SANITY_FILE


def evaluate(ctx: StageContext[Params]) -> dict[str, float]:
    """metrics.json (scalars + claims), decoders.png, grid.png, orders.png."""
    p, s = ctx.params, ctx.params.search
    table = read_table(ctx.input("decode", RESULTS_FILE)).to_pydict()
    summary = summarise(table, s.c_puct, s.n_sim, s.c_grid, s.sim_grid, p.plans.seeds.confidence)
    sanity = {k: read_json(ctx.input(f"train_{k}", SANITY_FILE)) for k in ("mdm", "ar")}
    base = read_json(ctx.input("baselines", BASELINES_FILE))
    metrics = {f"acc_{d}": round(v.mean, 4) for d, v in {**summary.accuracy, **summary.grid}.items()}
    metrics |= {f"cost_{d}": round(v, 2) for d, v in summary.cost.items()}
    metrics |= {f"trace_exact_{d}": round(v, 4) for d, v in summary.trace_exact.items()}
    metrics |= {f"slot_acc_{k}": round(min(v["slot_accuracy"]), 4) for k, v in sanity.items()}
    metrics |= {"majority_baseline": round(sanity["mdm"]["majority_baseline"], 4)}
    metrics |= {f"count_table_{k}_accuracy": round(base[f"count_{k}_accuracy"], 4) for k in ("slot", "answer")}
    metrics |= {"majority_answer_accuracy": round(base["majority_answer_accuracy"], 4)}
    oracle = float(np.mean(base["oracle_accuracy"]))
    metrics |= {"acc_oracle_order": round(oracle, 4),
                "order_headroom": round(oracle - summary.accuracy[summary.best_fixed].mean, 4),  # over the best fixed order
                "dependency_ordered_share": round(base["dependency_ordered_share"], 4)}
    for name in ("gain_vs_confidence", "gain_vs_best_fixed", "gain_vs_ar", "effect_c", "effect_sims"):
        metrics[name] = round(getattr(summary, name).mean, 4)
    metrics |= {"sequential_share": round(summary.sequential_share.mean, 4)}
    write_metrics(ctx.out, metrics, claims(summary, sanity, base, p.claims, p.plans))
    save_figure(plot_decoders(summary), ctx.output("decoders.png"))
    save_figure(plot_grid(summary, s.c_grid, s.sim_grid), ctx.output("grid.png"))
    save_figure(plot_orders(summary), ctx.output("orders.png"))
    return {k: metrics[k] for k in ("gain_vs_confidence", "gain_vs_ar", "effect_c", "effect_sims", "order_headroom")}
