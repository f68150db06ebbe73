"""Stage ``evaluate``: pass rate vs budget and token cost in both counts, the trivial rungs (z3 alone, the first
sketch unrevised), subgoal reuse, the claims (claims.py) and the figures."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.compute as pc

from paperdag.claims import write_metrics
from paperdag.io import read_table, save_figure
from paperdag.stage import StageContext

from .analysis import COUNTS, Runs, pass_curve, token_means, tokens_by_level
from .claims import REF, Measured, claims
from .params import Params
from .plots import plot_cost, plot_pass_vs_budget
from .prove import RUNS_FILE
from .verify import VERIFIED_FILE


def evaluate(ctx: StageContext[Params], methods: list[str]) -> dict[str, float]:
    """metrics.json (per-method pass rates, areas, tokens both ways, reuse; the claims) and two figures."""
    p = ctx.params
    b = p.claims.budget
    verified = read_table(ctx.input("verify", VERIFIED_FILE))
    runs = {m: Runs.from_tables(read_table(ctx.input(f"prove_{m}", RUNS_FILE)),
                                verified.filter(pc.equal(verified["method"], m))) for m in methods}
    baselines = [m for m in methods if m != REF]
    measured = Measured(
        at_budget={m: r.pass_rates(b, "total") for m, r in runs.items()},
        auc={c: {m: r.auc(b, c) for m, r in runs.items()} for c in COUNTS},
        at_cap={m: r.pass_rates(p.max_budget, "emitted") for m, r in runs.items()},
        tokens={c: {m: token_means(runs[REF], runs[m], c) for m in baselines} for c in COUNTS},
        first_sketch=runs[REF].first_sketch_pass_rates(b, "total"),
        first_sketch_fails=runs[REF].first_sketch_fails(),
        reuse={m: runs[m].reuse_per_seed() for m in methods if m != "whole_proof"},
        rejected_proofs=int((~np.array(verified["ok"].to_pylist(), dtype=bool)).sum()))
    drawn = json.loads(ctx.input("prepare", "provenance.json").read_text())["rejected_draws"]
    metrics = {f"pass_rate_{m}": float(v.mean()) for m, v in measured.at_budget.items()}
    metrics |= {f"auc_{c}_{m}": float(v.mean()) for c, by in measured.auc.items() for m, v in by.items()}
    metrics |= {f"pass_rate_cap_{m}": float(v.mean()) for m, v in measured.at_cap.items()}
    metrics |= {f"tokens_per_solved_{m}": float(r.cost("total")[r.solved].mean()) for m, r in runs.items()}
    metrics |= {f"emitted_per_solved_{m}": float(r.tokens[r.solved].mean()) for m, r in runs.items()}
    reuse = {m: runs[m].reuse() for m in measured.reuse}
    metrics |= {f"subgoal_reuse_{m}": v for m, v in reuse.items()}
    kept, direct = len(np.unique(runs[REF].theorem)), sum(v["proved_without_sketch"] for v in drawn.values())
    draws = kept + direct + sum(v["reference_sketch_failed"] for v in drawn.values())
    fails, n = measured.first_sketch_fails
    metrics |= {"rejected_proofs": measured.rejected_proofs, "theorems": kept, "draws": draws,
                "direct_proof_rate_of_draws": direct / draws,  # the trivial baseline: z3 on the goal, no sketch
                "first_sketch_fail_rate": fails / n, "pass_rate_first_sketch": float(measured.first_sketch.mean())}
    write_metrics(ctx.out, metrics, claims(measured, p.claims, p.plans))
    budgets = np.linspace(0, p.max_budget, 101)
    curves = {c: {m: pass_curve(r, budgets, c) for m, r in runs.items()} for c in COUNTS}
    save_figure(plot_pass_vs_budget(budgets, curves, b), ctx.output("pass_vs_budget.png"))
    save_figure(plot_cost({c: {m: tokens_by_level(r, c) for m, r in runs.items()} for c in COUNTS}, reuse),
                ctx.output("cost.png"))
    return {k: float(v) for k, v in metrics.items()}
