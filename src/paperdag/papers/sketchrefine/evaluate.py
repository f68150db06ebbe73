"""Stage ``evaluate``: pass rate vs budget and token cost in both counts, the trivial rungs (z3 alone, the first
sketch unrevised), per-level pass rates, subgoal reuse, the claims (claims.py) re-judged at every point of the
error-rate grid (grid.py), and the figures."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.compute as pc

from paperdag.claims import write_metrics
from paperdag.common.verdicts import resolve
from paperdag.io import read_table, save_figure
from paperdag.stage import StageContext

from .analysis import COUNTS, Runs, measure, pass_by_level, pass_curve, tokens_by_level
from .claims import REF, claims
from .grid import GRID_FILE, grid_theorems
from .params import Params
from .plots import plot_cost, plot_grid, plot_pass_vs_budget
from .prepare import THEOREMS_FILE
from .prove import RUNS_FILE
from .theorems import theorems_from_rows
from .verify import VERIFIED_FILE


def evaluate(ctx: StageContext[Params], methods: list[str], points: list[str]) -> dict[str, float]:
    """metrics.json (per-method pass rates, areas, tokens both ways, per-level pass rates, reuse; the claims with
    their verdict at each grid point) and three figures."""
    p = ctx.params
    at = {"emitted": p.claims.emitted_budget, "total": p.claims.budget}
    verified = read_table(ctx.input("verify", VERIFIED_FILE))
    runs = {m: Runs.from_tables(read_table(ctx.input(f"prove_{m}", RUNS_FILE)),
                                verified.filter(pc.equal(verified["method"], m))) for m in methods}
    rejected = int((~np.array(verified["ok"].to_pylist(), dtype=bool)).sum())
    measured = measure(runs, at["emitted"], at["total"], p.max_budget, rejected)
    # the grid: the x1 point is the default's share of the grid's theorems and seeds; the others from their stages
    theorems = theorems_from_rows(read_table(ctx.input("prepare", THEOREMS_FILE)).to_pylist())
    names = {t.name for _, t in grid_theorems(theorems, p.grid.per_level)}
    plans = p.plans.model_copy(update={"seeds": p.plans.grid, "runs": p.plans.runs.model_copy(
        update={"n": len(names) * p.grid.seeds})})
    point_runs = {"default_x1": {m: r.subset(names, p.grid.seeds) for m, r in runs.items()}}
    for g in points:
        rows = read_table(ctx.input(f"grid_{g}", GRID_FILE)).to_pylist()
        point_runs[g] = {m: Runs.from_rows([r for r in rows if r["method"] == m]) for m in methods}
    at_points = {g: measure(r, at["emitted"], at["total"], p.max_budget, 0) for g, r in point_runs.items()}
    judged = {g: claims(m, p.claims, plans) for g, m in at_points.items()}
    verdicts = {g: {c.id: c.verdict for c in resolve(cs)} for g, cs in judged.items()}
    alone = {g: {c.id: c.verdict for c in cs} for g, cs in judged.items()}
    published = claims(measured, p.claims, p.plans, grid=verdicts, alone=alone)
    main = {c.id: c.verdict for c in resolve(published)}
    grid = {"default (full size)": main} | verdicts
    drawn = json.loads(ctx.input("prepare", "provenance.json").read_text())["rejected_draws"]
    metrics = {f"pass_rate_{m}": float(v.mean()) for m, v in measured.at_budget["total"].items()}
    metrics |= {f"pass_rate_emitted_{m}": float(v.mean()) for m, v in measured.at_budget["emitted"].items()}
    metrics |= {f"auc_{c}_{m}": float(v.mean()) for c, by in measured.auc.items() for m, v in by.items()}
    metrics |= {f"pass_rate_cap_{m}": float(v.mean()) for m, v in measured.at_cap.items()}
    metrics |= {f"pass_rate_L{k}_{c}_{m}": v for c in COUNTS for m, r in runs.items()
                for k, v in pass_by_level(r, at[c], c).items()}
    metrics |= {f"tokens_per_solved_{m}": float(r.cost("total")[r.solved].mean()) for m, r in runs.items()}
    metrics |= {f"emitted_per_solved_{m}": float(r.tokens[r.solved].mean()) for m, r in runs.items()}
    metrics |= {f"grid_{g}_pass_rate_{c}_{k}": float(v.mean()) for g, m in at_points.items() for c in COUNTS
                for k, v in m.at_budget[c].items()}
    metrics |= {f"grid_{g}_auc_{c}_diff_{k}": float((m.auc[c][REF] - v).mean()) for g, m in at_points.items()
                for c in COUNTS for k, v in m.auc[c].items() if k != REF}
    reuse = {m: runs[m].reuse() for m in measured.reuse}
    metrics |= {f"subgoal_reuse_{m}": v for m, v in reuse.items()}
    kept, direct = len(np.unique(runs[REF].theorem)), sum(v["proved_without_sketch"] for v in drawn.values())
    draws = kept + direct + sum(v["reference_sketch_failed"] for v in drawn.values())
    fails, n = measured.first_sketch_fails
    metrics |= {"rejected_proofs": rejected, "theorems": kept, "draws": draws,
                "direct_proof_rate_of_draws": direct / draws,  # the trivial baseline: z3 on the goal, no sketch
                "first_sketch_fail_rate": fails / n,
                "pass_rate_first_sketch": float(measured.first_sketch["total"].mean()),
                "pass_rate_emitted_first_sketch": float(measured.first_sketch["emitted"].mean()),
                "grid_sensitive_claims": float(sum(len({v[c] for v in verdicts.values()} & {"holds", "fails"}) == 2
                                                   for c in main)),
                "grid_sensitive_claims_judged_alone": float(sum(
                    len({v[c] for v in alone.values()} & {"holds", "fails"}) == 2 for c in main))}
    write_metrics(ctx.out, metrics, published)
    budgets = np.linspace(0, p.max_budget, 101)
    curves = {c: {m: pass_curve(r, budgets, c) for m, r in runs.items()} for c in COUNTS}
    save_figure(plot_pass_vs_budget(budgets, curves, at), ctx.output("pass_vs_budget.png"))
    save_figure(plot_cost({c: {m: tokens_by_level(r, c) for m, r in runs.items()} for c in COUNTS}, reuse),
                ctx.output("cost.png"))
    save_figure(plot_grid(grid), ctx.output("error_grid.png"))
    return {k: float(v) for k, v in metrics.items()}
