"""From per-query retrievals to per-cell accuracies, the depth trend of HAMN's advantage and error distances.

Per cell (model, b, D, seed): accuracy = P(retrieved leaf = source leaf); accuracy at level l = P(LCA level of
(retrieved, source) >= l), i.e. the retrieved leaf has the right ancestor at level l (level D = exact retrieval);
error LCA = mean LCA level / D over the wrong retrievals (1 would be the right leaf, 0 the root).
Advantage over a baseline Delta(b, D, s) = accuracy_HAMN - accuracy_baseline on the same query noise; its depth
trend per seed is the OLS slope of Delta on D, summarised over seeds by a t interval (paperdag.common.stats.mean_ci).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

CELL = ["branching", "depth", "seed"]


def cell_table(retrievals: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per (model, b, D, seed): accuracy, n_queries, n_errors, error_lca (NaN without errors), max_norm."""
    rows = []
    for model, df in retrievals.items():
        g = df.assign(correct=df["leaf"] == df["retrieved"], lca_frac=df["lca_level"] / df["depth"])
        for key, cell in g.groupby(CELL):
            wrong = cell[~cell["correct"]]
            rows.append(dict(zip(CELL, key, strict=True), model=model, accuracy=cell["correct"].mean(),
                             n_queries=len(cell), n_errors=len(wrong), error_lca=wrong["lca_frac"].mean(),
                             max_norm=cell["max_norm"].max()))
    return pd.DataFrame(rows)


def level_accuracy(retrievals: dict[str, pd.DataFrame], branching: int, depth: int) -> dict[str, np.ndarray]:
    """model -> [P(LCA level >= l) for l = 0..D] over all seeds of the cell (b, D)."""
    out = {}
    for model, df in retrievals.items():
        lca = df[(df["branching"] == branching) & (df["depth"] == depth)]["lca_level"].to_numpy()
        out[model] = np.array([(lca >= lvl).mean() for lvl in range(depth + 1)])
    return out


def advantage(cells: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Delta = accuracy_HAMN - accuracy_baseline per (b, D, seed)."""
    wide = cells.pivot_table(index=CELL, columns="model", values="accuracy").reset_index()
    return wide.assign(delta=wide["hamn"] - wide[baseline])


def depth_slopes(adv: pd.DataFrame, branching: int) -> np.ndarray:
    """Per seed, the OLS slope of Delta on D over the depths of branching b."""
    sub = adv[adv["branching"] == branching]
    return np.array([np.polyfit(g["depth"], g["delta"], 1)[0] for _, g in sub.groupby("seed")])


def error_lca_gap(cells: pd.DataFrame, baseline: str, min_depth: int) -> np.ndarray:
    """error_lca_HAMN - error_lca_baseline per cell with D >= min_depth where both models made errors."""
    wide = cells[cells["depth"] >= min_depth].pivot_table(index=CELL, columns="model", values="error_lca")
    return (wide["hamn"] - wide[baseline]).dropna().to_numpy()


def clean_minima(clean: pd.DataFrame) -> dict[str, dict[tuple[int, int], float]]:
    """model -> (b, D) -> the least accuracy over seeds of the noise-free queries of every stored leaf."""
    least = clean.groupby(["model", "branching", "depth"])["accuracy"].min()
    out: dict[str, dict[tuple[int, int], float]] = {}
    for (model, b, d), v in least.items():
        out.setdefault(str(model), {})[int(b), int(d)] = float(v)
    return out


def seed_values(table: pd.DataFrame, branching: int, depth: int, column: str) -> np.ndarray:
    """``column`` of the cell (b, D), one value per seed in seed order (so two tables' values pair by seed)."""
    return table[(table["branching"] == branching) & (table["depth"] == depth)].sort_values("seed")[column].to_numpy()
