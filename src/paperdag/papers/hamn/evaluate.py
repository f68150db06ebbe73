"""Stage ``evaluate``: per-cell accuracies, noise tolerances and error distances (analysis.py; each memory's decoders
were run on its own queries in the retrieve stage), the embeddings' trivial rungs (ladders.py: the untrained
embedding and a random ranking), the claims (claims.py), the figures (plots.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from paperdag.claims import write_metrics
from paperdag.common.stats import mean_ci
from paperdag.io import read_table, save_figure, write_table
from paperdag.stage import StageContext

from .analysis import (advantage, cell_table, clean_means, depth_slopes, error_lca_gap, level_accuracy, seed_values,
                       tolerance_table)
from .claims import (BASELINES, COMPARED, RANDOM_RANKING, UNTRAINED, Comparison, DecoderRung, EmbeddingRungs, Regime,
                     claims)
from .design import CALIBRATION_DEPTH
from .embed import QUALITY_FILE
from .ladders import random_ranking_map
from .params import Params
from .plots import plot_accuracy_by_level, plot_accuracy_vs_depth, plot_error_lca, plot_tolerance_vs_depth
from .prepare import TREES_FILE
from .queries import GEOMETRY, MODELS
from .pilot import seed_spreads
from .retrieve import BETA_FILE, CALIBRATION_FILE, CLEAN_FILE, PILOT_FILE, RETRIEVALS_FILE
from .store import load_tree


def comparison(cells: pd.DataFrame, baseline: str, branchings: list[int], deepest: int) -> Comparison:
    """HAMN against ``baseline``: the advantage at the deepest D and the depth slope of the log rho_50 ratio (per b,
    over seeds), and the error-LCA gap (over cells with D >= 3)."""
    adv, tol = advantage(cells, baseline), tolerance_table(cells, baseline)
    return Comparison({b: mean_ci(adv[(adv.branching == b) & (adv.depth == deepest)]["delta"].to_numpy(), unit="seed")
                       for b in branchings},
                      {b: mean_ci(depth_slopes(tol, b), unit="seed") for b in branchings},
                      mean_ci(error_lca_gap(cells, baseline, CALIBRATION_DEPTH + 1), unit="cell"))


def decoder_rung(cells: pd.DataFrame, model: str) -> DecoderRung:
    """One memory's accuracy, its decoders', chance and the share it decodes unlike its nearest-neighbour decoder,
    per evaluation cell."""
    c = cells[cells.model == model].sort_values(["branching", "depth", "seed"])
    n = c["n_queries"].to_numpy()
    return DecoderRung(*(c[k].to_numpy() for k in ("accuracy", "accuracy_nn", "accuracy_ml", "chance",
                                                   "share_unlike_nn")),
                       int(n.sum()), int(round(float((c["share_unlike_nn"] * n).sum()))))


def random_rankings(p: Params, ctx: StageContext[Params]) -> dict[tuple[int, int], np.ndarray]:
    """(b, D) -> the random-ranking rung's MAP per evaluation seed (ascending seed; ladders.random_ranking_map)."""
    trees = {(b, d): load_tree(ctx.input("prepare", TREES_FILE), b, d) for b in p.trees.branchings
             for d in p.trees.depths}
    return {c: np.array([random_ranking_map(tree, p.seed, (*c, s)) for s in sorted(p.seeds)])
            for c, tree in trees.items()}


def embedding_rungs(p: Params, quality: pd.DataFrame, ranking: dict[tuple[int, int], np.ndarray]) -> EmbeddingRungs:
    """One geometry's MAP per (b, D) cell over the evaluation seeds, with the untrained embedding's and a random
    ranking's, and the tree path metric's MAP."""
    q = quality[quality.seed.isin(p.seeds)]
    cells = sorted(ranking)
    return EmbeddingRungs({c: seed_values(q, *c, "map") for c in cells},
                          {UNTRAINED: {c: seed_values(q, *c, "map_untrained") for c in cells},
                           RANDOM_RANKING: ranking},
                          {c: float(seed_values(q, *c, "map_tree_metric")[0]) for c in cells})


def evaluate(ctx: StageContext[Params]) -> dict[str, float]:
    """cells.parquet (per model and cell: accuracies of the memory and its decoders, share decoded unlike the
    nearest-neighbour decoder, log rho_50), metrics.json (claims; the pilot's spreads, pilot.py) and four figures."""
    p = ctx.params
    runs = {m: read_table(ctx.input(f"retrieve_{m}", RETRIEVALS_FILE)).to_pandas() for m in MODELS}
    calibration = {m: read_table(ctx.input(f"retrieve_{m}", CALIBRATION_FILE)).to_pandas() for m in MODELS}
    rho = {m: {int(r.branching): float(r.rho) for r in calibration[m].itertuples()} for m in MODELS}
    cells = cell_table(runs, rho)
    write_table(ctx.output("cells.parquet"), cells)
    bs, deepest_d = p.trees.branchings, max(p.trees.depths)
    versus = {m: comparison(cells, m, bs, deepest_d) for m in BASELINES}
    quality = {g: read_table(ctx.input(f"embed_{g}", QUALITY_FILE)).to_pandas() for g in set(GEOMETRY.values())}
    clean = pd.concat([read_table(ctx.input(f"retrieve_{m}", CLEAN_FILE)).to_pandas().assign(model=m) for m in MODELS])
    betas = pd.concat([read_table(ctx.input(f"retrieve_{m}", BETA_FILE)).to_pandas().assign(model=m) for m in MODELS])
    decoders = {m: decoder_rung(cells, m) for m in COMPARED}
    shallow = cells[cells.depth == CALIBRATION_DEPTH]
    ranking = random_rankings(p, ctx)
    regime = Regime(clean_means(clean), {g: {b: seed_values(q[q.seed.isin(p.seeds)], b, deepest_d, "map") for b in bs}
                                         for g, q in quality.items()},
                    {g: embedding_rungs(p, q, ranking) for g, q in quality.items()}, decoders,
                    {m: {b: mean_ci(shallow[(shallow.model == m) & (shallow.branching == b)]["accuracy_ml"].to_numpy(),
                                    unit="seed") for b in bs} for m in COMPARED},
                    {m: {b: mean_ci(depth_slopes(cells[cells.model == m], b, "log_rho50"), unit="seed") for b in bs}
                     for m in MODELS})
    hamn = cells[cells.model == "hamn"]
    n_queries = len(runs["hamn"])
    pilot = cell_table({m: read_table(ctx.input(f"retrieve_{m}", PILOT_FILE)).to_pandas() for m in MODELS}, rho)
    spreads = seed_spreads(pilot, BASELINES, COMPARED, bs, deepest_d, CALIBRATION_DEPTH)
    verdicts = claims(versus, float(hamn["max_norm"].max()), n_queries * (p.hamn.steps + 1), regime, p.claims,
                      p.retrieval.target_accuracy, p.plans, spreads, sorted(int(x) for x in pilot["seed"].unique()))
    leaves = {(b, d): b**d for b in bs for d in p.trees.depths}
    metrics: dict[str, float] = {f"rho_{m}_b{b}": v for m in MODELS for b, v in rho[m].items()}
    metrics |= {f"wrapped_floor_b{r.branching}": float(r.wrapped_floor) for r in calibration["hamn"].itertuples()}
    for r in betas.itertuples():
        metrics[f"beta_{r.model}_b{r.branching}_D{r.depth}"] = float(r.beta)
        metrics[f"beta_clean_rule_{r.model}_b{r.branching}_D{r.depth}"] = float(r.beta_clean)
        metrics[f"beta_calibration_clean_acc_{r.model}_b{r.branching}_D{r.depth}"] = float(r.clean_accuracy)
        metrics[f"beta_calibration_noisy_acc_{r.model}_b{r.branching}_D{r.depth}"] = float(r.noisy_accuracy)
        metrics[f"beta_calibration_noisy_decoder_{r.model}_b{r.branching}_D{r.depth}"] = float(r.noisy_decoder)
    means = cells.groupby(["model", "branching", "depth"])[["accuracy", "accuracy_nn", "share_unlike_nn",
                                                            "log_rho50"]].mean().reset_index()
    for r in means.itertuples():
        tag = f"{r.model}_b{r.branching}_D{r.depth}"
        metrics |= {f"acc_{tag}": float(r.accuracy), f"acc_nn_decoder_{tag}": float(r.accuracy_nn),
                    f"share_unlike_nn_{tag}": float(r.share_unlike_nn), f"log_rho50_{tag}": float(r.log_rho50)}
    for r in clean.groupby(["model", "branching", "depth"])["accuracy"].mean().reset_index().itertuples():
        metrics[f"clean_acc_{r.model}_b{r.branching}_D{r.depth}"] = float(r.accuracy)
    for g, q in quality.items():
        for r in q.groupby(["branching", "depth"])[["map", "distortion"]].mean().reset_index().itertuples():
            metrics[f"map_{g}_b{r.branching}_D{r.depth}"] = float(r.map)
            metrics[f"distortion_{g}_b{r.branching}_D{r.depth}"] = float(r.distortion)
    for m, v in versus.items():
        metrics |= {f"tolerance_slope_vs_{m}_b{b}": v.tolerance_slope[b].mean for b in bs}
        metrics |= {f"error_lca_gap_vs_{m}": v.error_gap.mean}
    for m, per_b in regime.tolerance.items():
        metrics |= {f"log_rho50_slope_{m}_b{b}": iv.mean for b, iv in per_b.items()}
    metrics |= {f"least_clean_acc_{m}": min(c.values()) for m, c in regime.clean.items()}
    for m, r in decoders.items():
        metrics |= {f"acc_nn_decoder_{m}": float(r.accuracy_nn.mean()), f"acc_ml_decoder_{m}": float(
            r.accuracy_ml.mean()), f"share_decoded_unlike_nn_{m}": r.disagreements / r.n_queries}
    for family, sp in spreads.items():
        metrics[f"pilot_sd_{family}"] = sp.sd
        metrics |= {f"pilot_sd_{family}_{part}": v for part, v in sp.by_part.items()}
    write_metrics(ctx.out, metrics, verdicts)
    save_figure(plot_accuracy_vs_depth(cells, clean, leaves), ctx.output("accuracy_vs_depth.png"))
    save_figure(plot_tolerance_vs_depth(cells), ctx.output("tolerance_vs_depth.png"))
    levels = {b: level_accuracy({m: r[r.level == 1.0] for m, r in runs.items()}, b, deepest_d) for b in bs}
    save_figure(plot_accuracy_by_level(levels, dict.fromkeys(bs, deepest_d)), ctx.output("accuracy_by_level.png"))
    save_figure(plot_error_lca(cells), ctx.output("error_lca.png"))
    return metrics
