"""Stage ``evaluate``: per-cell accuracies and error distances (analysis.py), the claims (claims.py), the figures
(plots.py)."""

from __future__ import annotations

import pandas as pd

from paperdag.claims import write_metrics
from paperdag.common.stats import mean_ci
from paperdag.io import read_table, save_figure, write_table
from paperdag.stage import StageContext

from .analysis import advantage, cell_table, clean_minima, depth_slopes, error_lca_gap, level_accuracy, seed_values
from .claims import BASELINES, COMPARED, Comparison, Regime, claims
from .design import CALIBRATION_DEPTH
from .embed import QUALITY_FILE
from .params import Params
from .plots import plot_accuracy_by_level, plot_accuracy_vs_depth, plot_error_lca
from .queries import GEOMETRY, MODELS
from .retrieve import CALIBRATION_FILE, CLEAN_FILE, RETRIEVALS_FILE


def comparison(cells: pd.DataFrame, baseline: str, branchings: list[int], deepest: int) -> Comparison:
    """HAMN against ``baseline``: the advantage at D = 2 and at the deepest D, its depth slope (per b, over seeds)
    and the error-LCA gap (over cells with D >= 3)."""
    adv = advantage(cells, baseline)
    at = {d: {b: mean_ci(adv[(adv.branching == b) & (adv.depth == d)]["delta"].to_numpy()) for b in branchings}
          for d in (CALIBRATION_DEPTH, deepest)}
    return Comparison(at[CALIBRATION_DEPTH], at[deepest], {b: mean_ci(depth_slopes(adv, b)) for b in branchings},
                      mean_ci(error_lca_gap(cells, baseline, CALIBRATION_DEPTH + 1)))


def evaluate(ctx: StageContext[Params]) -> dict[str, float]:
    """cells.parquet, metrics.json (claims) and three figures."""
    p = ctx.params
    runs = {m: read_table(ctx.input(f"retrieve_{m}", RETRIEVALS_FILE)).to_pandas() for m in MODELS}
    cells = cell_table(runs)
    write_table(ctx.output("cells.parquet"), cells)
    bs, deepest_d = p.trees.branchings, max(p.trees.depths)
    versus = {m: comparison(cells, m, bs, deepest_d) for m in BASELINES}
    leaves = {(b, d): b**d for b in bs for d in p.trees.depths}
    quality = {g: read_table(ctx.input(f"embed_{g}", QUALITY_FILE)).to_pandas() for g in set(GEOMETRY.values())}
    compared = cells[cells.model.isin(COMPARED)]
    chance = (compared["accuracy"] - 1 / compared.apply(lambda r: leaves[r.branching, r.depth], axis=1)).min()
    clean = pd.concat([read_table(ctx.input(f"retrieve_{m}", CLEAN_FILE)).to_pandas().assign(model=m) for m in MODELS])
    regime = Regime(clean_minima(clean), {g: {b: seed_values(q, b, deepest_d, "map") for b in bs}
                                          for g, q in quality.items()},
                    {g: float(((q["map"] - q["map_untrained"]) / (q["map_tree_metric"] - q["map_untrained"])).min())
                     for g, q in quality.items()}, float(chance))
    hamn = cells[cells.model == "hamn"]
    verdicts = claims(versus, float(hamn["max_norm"].max()), int(hamn["n_queries"].sum()) * (p.hamn.steps + 1), regime,
                      p.claims)
    calibration = {m: read_table(ctx.input(f"retrieve_{m}", CALIBRATION_FILE)).to_pandas() for m in MODELS}
    metrics: dict[str, float] = {f"rho_{m}_b{r.branching}": r.rho for m in MODELS for r in calibration[m].itertuples()}
    for r in cells.groupby(["model", "branching", "depth"])["accuracy"].mean().reset_index().itertuples():
        metrics[f"acc_{r.model}_b{r.branching}_D{r.depth}"] = float(r.accuracy)
    for r in clean.groupby(["model", "branching", "depth"])[["accuracy", "beta"]].mean().reset_index().itertuples():
        metrics[f"clean_acc_{r.model}_b{r.branching}_D{r.depth}"] = float(r.accuracy)
        metrics[f"beta_{r.model}_b{r.branching}_D{r.depth}"] = float(r.beta)
    for g, q in quality.items():
        for r in q.groupby(["branching", "depth"])[["map", "distortion"]].mean().reset_index().itertuples():
            metrics[f"map_{g}_b{r.branching}_D{r.depth}"] = float(r.map)
            metrics[f"distortion_{g}_b{r.branching}_D{r.depth}"] = float(r.distortion)
    for m, v in versus.items():
        metrics |= {f"slope_vs_{m}_b{b}": v.slope[b].mean for b in bs} | {f"error_lca_gap_vs_{m}": v.error_gap.mean}
    metrics |= {f"least_clean_acc_{m}": min(c.values()) for m, c in regime.clean.items()}
    write_metrics(ctx.out, metrics, verdicts)
    save_figure(plot_accuracy_vs_depth(cells, clean, leaves), ctx.output("accuracy_vs_depth.png"))
    levels = {b: level_accuracy(runs, b, deepest_d) for b in bs}
    save_figure(plot_accuracy_by_level(levels, dict.fromkeys(bs, deepest_d)), ctx.output("accuracy_by_level.png"))
    save_figure(plot_error_lca(cells), ctx.output("error_lca.png"))
    return metrics
