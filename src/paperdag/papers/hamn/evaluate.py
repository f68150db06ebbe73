"""Stage ``evaluate``: per-cell accuracies and error distances (analysis.py), the claims (claims.py), the figures
(plots.py)."""

from __future__ import annotations

import pandas as pd

from paperdag.claims import write_metrics
from paperdag.io import read_table, save_figure, write_table
from paperdag.stage import StageContext

from .analysis import advantage, cell_table, depth_slopes, error_lca_gap, level_accuracy, t_interval
from .claims import claims
from .design import CALIBRATION_DEPTH
from .embed import QUALITY_FILE
from .params import Params
from .plots import plot_accuracy_by_level, plot_accuracy_vs_depth, plot_error_lca
from .queries import GEOMETRY, MODELS
from .retrieve import CALIBRATION_FILE, CLEAN_FILE, RETRIEVALS_FILE


def evaluate(ctx: StageContext[Params]) -> dict[str, float]:
    """cells.parquet, metrics.json (claims) and three figures."""
    p = ctx.params
    runs = {m: read_table(ctx.input(f"retrieve_{m}", RETRIEVALS_FILE)).to_pandas() for m in MODELS}
    cells = cell_table(runs)
    write_table(ctx.output("cells.parquet"), cells)
    adv = advantage(cells)
    bs, deepest_d = p.trees.branchings, max(p.trees.depths)
    leaves = {(b, d): b**d for b in bs for d in p.trees.depths}
    quality = {g: read_table(ctx.input(f"embed_{g}", QUALITY_FILE)).to_pandas() for g in GEOMETRY.values()}
    at = {d: {b: t_interval(adv[(adv.branching == b) & (adv.depth == d)]["delta"].to_numpy()) for b in bs}
          for d in (CALIBRATION_DEPTH, deepest_d)}
    slope = {b: t_interval(depth_slopes(adv, b)) for b in bs}
    gap = t_interval(error_lca_gap(cells, CALIBRATION_DEPTH + 1))
    chance = (cells["accuracy"] - 1 / cells.apply(lambda r: leaves[r.branching, r.depth], axis=1)).min()
    hamn = cells[cells.model == "hamn"]
    verdicts = claims(at[CALIBRATION_DEPTH], at[deepest_d], slope, gap, float(hamn["max_norm"].max()),
                      int(hamn["n_queries"].sum()) * (p.hamn.steps + 1),
                      {g: float(((q["map"] - q["map_untrained"]) / (q["map_tree_metric"] - q["map_untrained"])).min())
                       for g, q in quality.items()}, chance, p.claims)
    calibration = {m: read_table(ctx.input(f"retrieve_{m}", CALIBRATION_FILE)).to_pandas() for m in MODELS}
    metrics: dict[str, float] = {f"rho_{m}_b{r.branching}": r.rho for m in MODELS for r in calibration[m].itertuples()}
    for r in cells.groupby(["model", "branching", "depth"])["accuracy"].mean().reset_index().itertuples():
        metrics[f"acc_{r.model}_b{r.branching}_D{r.depth}"] = float(r.accuracy)
    clean = pd.concat([read_table(ctx.input(f"retrieve_{m}", CLEAN_FILE)).to_pandas().assign(model=m) for m in MODELS])
    for r in clean.groupby(["model", "branching", "depth"])["accuracy"].mean().reset_index().itertuples():
        metrics[f"clean_acc_{r.model}_b{r.branching}_D{r.depth}"] = float(r.accuracy)
    for g, q in quality.items():
        for r in q.groupby(["branching", "depth"])["map"].mean().reset_index().itertuples():
            metrics[f"map_{g}_b{r.branching}_D{r.depth}"] = float(r.map)
    metrics |= {f"slope_b{b}": slope[b].mean for b in bs} | {"error_lca_gap": gap.mean}
    write_metrics(ctx.out, metrics, verdicts)
    save_figure(plot_accuracy_vs_depth(cells, clean, leaves), ctx.output("accuracy_vs_depth.png"))
    levels = {b: level_accuracy(runs, b, deepest_d) for b in bs}
    save_figure(plot_accuracy_by_level(levels, dict.fromkeys(bs, deepest_d)), ctx.output("accuracy_by_level.png"))
    save_figure(plot_error_lca(cells), ctx.output("error_lca.png"))
    return metrics
