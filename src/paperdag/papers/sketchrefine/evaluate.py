"""Stage ``evaluate``: pass rate vs budget, token cost, subgoal reuse, the claims (claims.py) and the figures."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.compute as pc

from paperdag.claims import write_metrics
from paperdag.io import read_table, save_figure
from paperdag.stage import StageContext

from .analysis import Runs, pass_curve, token_means, tokens_by_level
from .claims import claims
from .params import Params
from .plots import plot_cost, plot_pass_vs_budget
from .prove import RUNS_FILE
from .verify import VERIFIED_FILE

REF = "sketchrefine"


def evaluate(ctx: StageContext[Params], methods: list[str]) -> dict[str, float]:
    """metrics.json (per-method pass rates, tokens, checker calls, reuse; the claims) and two figures."""
    p = ctx.params
    verified = read_table(ctx.input("verify", VERIFIED_FILE))
    runs = {m: Runs.from_tables(read_table(ctx.input(f"prove_{m}", RUNS_FILE)),
                                verified.filter(pc.equal(verified["method"], m))) for m in methods}
    baselines = [m for m in methods if m != REF]
    budgets = np.linspace(0, p.max_budget, 101)
    rates = {m: r.pass_rates(p.claims.budget) for m, r in runs.items()}
    rates_max = {m: r.pass_rates(p.max_budget) for m, r in runs.items()}
    tokens = {m: token_means(runs[REF], runs[m]) for m in baselines}
    reuse = {m: runs[m].reuse() for m in methods if m != "whole_proof"}
    rejected = int((~np.array(verified["ok"].to_pylist(), dtype=bool)).sum())
    drawn = json.loads(ctx.input("prepare", "provenance.json").read_text())["rejected_draws"]
    metrics = {f"pass_rate_{m}": float(v.mean()) for m, v in rates.items()}
    metrics |= {f"pass_rate_max_budget_{m}": float(v.mean()) for m, v in rates_max.items()}
    metrics |= {f"tokens_per_solved_{m}": float(r.tokens[r.solved].mean()) for m, r in runs.items()}
    metrics |= {f"checker_calls_per_run_{m}": float(r.calls.mean()) for m, r in runs.items()}
    metrics |= {f"subgoal_reuse_{m}": v for m, v in reuse.items()}
    kept, direct = len(np.unique(runs[REF].theorem)), sum(v["proved_without_sketch"] for v in drawn.values())
    draws = kept + direct + sum(v["reference_sketch_failed"] for v in drawn.values())
    metrics |= {"rejected_proofs": rejected, "theorems": kept, "draws": draws,
                "direct_proof_rate_of_draws": direct / draws}  # the trivial baseline: z3 on the goal, no sketch
    write_metrics(ctx.out, metrics, claims(rates, rates_max, tokens, reuse, rejected, p.claims))
    save_figure(plot_pass_vs_budget(budgets, {m: pass_curve(r, budgets) for m, r in runs.items()}, p.claims.budget),
                ctx.output("pass_vs_budget.png"))
    save_figure(plot_cost({m: tokens_by_level(r) for m, r in runs.items()}, reuse), ctx.output("cost.png"))
    return {k: float(v) for k, v in metrics.items()}
