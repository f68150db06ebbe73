"""Stage ``evaluate``: accuracy, grid, order and cost summaries (analysis.py) against the baselines stage's count
table and oracle order, the claims and the figures."""

from __future__ import annotations

import numpy as np

from paperdag.claims import write_metrics
from paperdag.io import read_json, read_table, save_figure
from paperdag.stage import StageContext

from .analysis import STRATA, STUDY_ORDERS, study_summary, summarise
from .baselines import BASELINES_FILE
from .claims import claims
from .decode import RESULTS_FILE
from .orders import STUDY_FILE
from .params import Params
from .plots import plot_decoders, plot_grid, plot_orders
from .study import all_orders
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
    st = study_summary(read_table(ctx.input("orders", STUDY_FILE)).to_pydict(), all_orders(p.data.n_statements + 1),
                       p.plans.programs.confidence)
    metrics |= {f"study_acc_{o}": round(float(np.mean(st.acc["all"][o])), 4) for o in STUDY_ORDERS}
    metrics |= {"order_headroom": round(float(np.mean(st.acc["all"]["dependency"] - st.acc["all"]["best_fixed"])), 4),
                "study_count_value_accuracy": round(st.count_value, 4),
                "study_count_answer_accuracy": round(st.count_answer, 4),
                "study_programs": st.programs, "study_out_of_order_programs": st.out_of_order,
                "dependency_ordered_share": round(base["dependency_ordered_share"], 4)}
    for i, seed in enumerate(st.seeds):  # per seed: competence, mechanism, every decoder on both strata
        pre = f"seed{seed}."
        metrics |= {pre + "forward_one_hop": round(st.forward[i].mean, 4),
                    pre + "ar_value_one_hop": round(st.ar_value[i].mean, 4),
                    pre + "filled_minus_masked_out_of_order": round(st.gain[i].mean, 4),
                    pre + "filled_minus_masked_in_order": round(st.gain_in_order[i].mean, 4)}
        for stratum in STRATA:
            metrics |= {f"{pre}study_{o}.{stratum}": round(float(st.acc[stratum][o][i]), 4) for o in STUDY_ORDERS}
            metrics |= {f"{pre}{d}.{stratum}": round(float(v[i]), 4) for d, v in summary.strata[stratum].items()}
    for name in ("gain_vs_confidence", "gain_vs_best_fixed", "gain_vs_ar", "effect_c", "effect_sims"):
        metrics[name] = round(getattr(summary, name).mean, 4)
    metrics |= {"sequential_share": round(summary.sequential_share.mean, 4)}
    write_metrics(ctx.out, metrics, claims(summary, st, sanity, base, p.claims, p.plans))
    save_figure(plot_decoders(summary), ctx.output("decoders.png"))
    save_figure(plot_grid(summary, s.c_grid, s.sim_grid), ctx.output("grid.png"))
    save_figure(plot_orders(summary), ctx.output("orders.png"))
    return {k: metrics[k] for k in ("gain_vs_confidence", "gain_vs_ar", "effect_c", "effect_sims", "order_headroom")}
