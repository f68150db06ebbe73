"""Stage ``evaluate``: per-cell accuracies and error distances (analysis.py), the trivial rungs of the preconditions
(ladders.py: each memory's nearest-neighbour decoder on its own queries, the untrained embedding and a random
ranking), the claims (claims.py), the figures (plots.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from paperdag.claims import write_metrics
from paperdag.common.stats import mean_ci
from paperdag.io import read_table, save_figure, write_table
from paperdag.stage import StageContext

from .analysis import advantage, cell_table, clean_minima, depth_slopes, error_lca_gap, level_accuracy, seed_values
from .claims import (BASELINES, COMPARED, RANDOM_RANKING, UNTRAINED, Comparison, DecoderRung, EmbeddingRungs, Regime,
                     claims)
from .design import CALIBRATION_DEPTH
from .embed import EMBEDDINGS_FILE, QUALITY_FILE
from .ladders import nearest_neighbour_cells, random_ranking_map
from .params import Params
from .plots import plot_accuracy_by_level, plot_accuracy_vs_depth, plot_error_lca
from .prepare import TREES_FILE
from .queries import GEOMETRY, MODELS
from .retrieve import CALIBRATION_FILE, CLEAN_FILE, RETRIEVALS_FILE
from .store import load_embeddings, load_tree


def comparison(cells: pd.DataFrame, baseline: str, branchings: list[int], deepest: int) -> Comparison:
    """HAMN against ``baseline``: the advantage at D = 2 and at the deepest D, its depth slope (per b, over seeds)
    and the error-LCA gap (over cells with D >= 3)."""
    adv = advantage(cells, baseline)
    at = {d: {b: mean_ci(adv[(adv.branching == b) & (adv.depth == d)]["delta"].to_numpy(), unit="seed")
              for b in branchings} for d in (CALIBRATION_DEPTH, deepest)}
    return Comparison(at[CALIBRATION_DEPTH], at[deepest],
                      {b: mean_ci(depth_slopes(adv, b), unit="seed") for b in branchings},
                      mean_ci(error_lca_gap(cells, baseline, CALIBRATION_DEPTH + 1), unit="cell"))


def decoder_rungs(p: Params, cells: pd.DataFrame, runs: dict[str, pd.DataFrame], calibration: dict[str, pd.DataFrame],
                  ctx: StageContext[Params]) -> tuple[dict[str, DecoderRung], pd.DataFrame]:
    """Each compared memory's accuracy, its nearest-neighbour decoder's on the same queries and chance, per
    evaluation cell (ladders.nearest_neighbour_cells), and the table of those rows."""
    trees = {(b, d): load_tree(ctx.input("prepare", TREES_FILE), b, d) for b in p.trees.branchings
             for d in p.trees.depths}
    embeddings = {g: load_embeddings(ctx.input(f"embed_{g}", EMBEDDINGS_FILE)) for g in set(GEOMETRY.values())}
    rungs, tables = {}, []
    for m in COMPARED:
        rho = {int(r.branching): float(r.rho) for r in calibration[m].itertuples()}
        nn = nearest_neighbour_cells(m, p.seed, trees, embeddings[GEOMETRY[m]], rho, runs[m],
                                     p.retrieval.queries_per_cell, p.embedding.curvature)
        nn = nn.merge(cells[cells.model == m][["branching", "depth", "seed", "accuracy"]],
                      on=["branching", "depth", "seed"], validate="one_to_one")
        rungs[m] = DecoderRung(nn["accuracy"].to_numpy(), nn["accuracy_nn"].to_numpy(), nn["chance"].to_numpy(),
                               int(nn["n_queries"].sum()), int(nn["disagreements"].sum()))
        tables.append(nn.assign(model=m))
    return rungs, pd.concat(tables)


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
    """cells.parquet, nearest_neighbour.parquet (each compared memory's per-cell accuracy beside its
    nearest-neighbour decoder's), metrics.json (claims) and three figures."""
    p = ctx.params
    runs = {m: read_table(ctx.input(f"retrieve_{m}", RETRIEVALS_FILE)).to_pandas() for m in MODELS}
    cells = cell_table(runs)
    write_table(ctx.output("cells.parquet"), cells)
    bs, deepest_d = p.trees.branchings, max(p.trees.depths)
    versus = {m: comparison(cells, m, bs, deepest_d) for m in BASELINES}
    quality = {g: read_table(ctx.input(f"embed_{g}", QUALITY_FILE)).to_pandas() for g in set(GEOMETRY.values())}
    clean = pd.concat([read_table(ctx.input(f"retrieve_{m}", CLEAN_FILE)).to_pandas().assign(model=m) for m in MODELS])
    calibration = {m: read_table(ctx.input(f"retrieve_{m}", CALIBRATION_FILE)).to_pandas() for m in MODELS}
    decoders, nn_table = decoder_rungs(p, cells, runs, calibration, ctx)
    write_table(ctx.output("nearest_neighbour.parquet"), nn_table)
    ranking = random_rankings(p, ctx)
    regime = Regime(clean_minima(clean), {g: {b: seed_values(q[q.seed.isin(p.seeds)], b, deepest_d, "map") for b in bs}
                                          for g, q in quality.items()},
                    {g: embedding_rungs(p, q, ranking) for g, q in quality.items()}, decoders)
    hamn = cells[cells.model == "hamn"]
    verdicts = claims(versus, float(hamn["max_norm"].max()), int(hamn["n_queries"].sum()) * (p.hamn.steps + 1), regime,
                      p.claims, p.plans)
    leaves = {(b, d): b**d for b in bs for d in p.trees.depths}
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
    for m, r in decoders.items():
        metrics |= {f"acc_nn_decoder_{m}": float(r.accuracy_nn.mean()),
                    f"share_decoded_unlike_nn_{m}": r.disagreements / r.n_queries}
    write_metrics(ctx.out, metrics, verdicts)
    save_figure(plot_accuracy_vs_depth(cells, clean, leaves), ctx.output("accuracy_vs_depth.png"))
    levels = {b: level_accuracy(runs, b, deepest_d) for b in bs}
    save_figure(plot_accuracy_by_level(levels, dict.fromkeys(bs, deepest_d)), ctx.output("accuracy_by_level.png"))
    save_figure(plot_error_lca(cells), ctx.output("error_lca.png"))
    return metrics
