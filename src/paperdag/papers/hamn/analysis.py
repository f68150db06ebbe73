"""From per-query retrievals to per-cell accuracies, noise tolerances, depth trends and error distances.

Per cell (model, b, D, seed), on the queries at the calibrated rho (level 1): accuracy = P(retrieved leaf = source
leaf), the same for the nearest-neighbour and ML decoders, and the share the memory decodes unlike its
nearest-neighbour decoder; accuracy at level l = P(LCA level of (retrieved, source) >= l) (level D = exact
retrieval); error LCA = mean LCA level / D over the wrong retrievals (1 would be the right leaf, 0 the root).
Noise tolerance (``tolerance``): on every query of the cell (all rho levels), the maximum-likelihood psychometric
curve P(correct | rho) = g + (1 - g) sigmoid(k (log rho_50 - log rho)), g = 1 / #leaves (chance at infinite
noise), k > 0; log rho_50 is where the memory retrieves half its queries. Depth trends: per seed the OLS slope on D
(of the accuracy advantage, of log rho_50, of the log ratio of two memories' rho_50), summarised over seeds by a t
interval (paperdag.common.stats.mean_ci).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.special import expit

CELL = ["branching", "depth", "seed"]
SPAN = 1.0  # log rho_50 may lie at most a factor e beyond the tested noise levels


def tolerance(levels: np.ndarray, correct: np.ndarray, chance: float) -> float:
    """log rho_50 of the ML psychometric curve (module docstring) through (levels, correct) (levels: rho or its
    multiplier), started at the level whose hit rate is nearest 1/2 and fitted by Nelder-Mead on (log rho_50, log k),
    log rho_50 bounded to SPAN beyond the tested levels (a curve that never crosses 1/2 there sits at the bound
    instead of running off) and log k to [-3, 5]."""
    x, y = np.log(levels), correct.astype(float)

    def nll(theta: np.ndarray) -> float:
        p = np.clip(chance + (1 - chance) * expit(np.exp(theta[1]) * (theta[0] - x)), 1e-12, 1 - 1e-12)
        return float(-(y * np.log(p) + (1 - y) * np.log1p(-p)).sum())

    grid = np.unique(x)
    rates = np.array([y[x == v].mean() for v in grid])
    start = np.array([grid[np.argmin(np.abs(rates - 0.5))], 1.0])
    bounds = [(grid[0] - SPAN, grid[-1] + SPAN), (-3.0, 5.0)]
    return float(minimize(nll, start, method="Nelder-Mead", bounds=bounds,
                          options={"xatol": 1e-6, "fatol": 1e-9, "maxiter": 4000}).x[0])


def cell_table(retrievals: dict[str, pd.DataFrame], rho: dict[str, dict[int, float]]) -> pd.DataFrame:
    """One row per (model, b, D, seed), on the level-1 queries: accuracy, accuracy_nn, accuracy_ml, share_unlike_nn,
    n_queries, n_errors, error_lca (NaN without errors), chance; max_norm over every query; log_rho50 over every
    query (rho = level * the model's calibrated rho of b)."""
    rows = []
    for model, df in retrievals.items():
        g = df.assign(correct=df["leaf"] == df["retrieved"], lca_frac=df["lca_level"] / df["depth"])
        for key, cell in g.groupby(CELL):
            main = cell[cell["level"] == 1.0]
            wrong = main[~main["correct"]]
            chance = 1 / key[0] ** key[1]
            rows.append(dict(zip(CELL, key, strict=True), model=model, accuracy=main["correct"].mean(),
                             accuracy_nn=(main["nearest"] == main["leaf"]).mean(),
                             accuracy_ml=(main["ml"] == main["leaf"]).mean(),
                             share_unlike_nn=(main["nearest"] != main["retrieved"]).mean(),
                             n_queries=len(main), n_errors=len(wrong), error_lca=wrong["lca_frac"].mean(),
                             chance=chance, max_norm=cell["max_norm"].max(),
                             log_rho50=np.log(rho[model][key[0]]) + tolerance(cell["level"].to_numpy(),
                                                                              cell["correct"].to_numpy(), chance)))
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


def depth_slopes(adv: pd.DataFrame, branching: int, column: str = "delta") -> np.ndarray:
    """Per seed, the OLS slope of ``column`` on D over the depths of branching b."""
    sub = adv[adv["branching"] == branching]
    return np.array([np.polyfit(g["depth"], g[column], 1)[0] for _, g in sub.groupby("seed")])


def tolerance_table(cells: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Per (b, D, seed): log rho_50 of HAMN and of ``baseline`` and ``delta`` = their difference (log ratio)."""
    wide = cells.pivot_table(index=CELL, columns="model", values="log_rho50").reset_index()
    return wide.assign(delta=wide["hamn"] - wide[baseline])


def error_lca_gap(cells: pd.DataFrame, baseline: str, min_depth: int) -> np.ndarray:
    """error_lca_HAMN - error_lca_baseline per cell with D >= min_depth where both models made errors."""
    wide = cells[cells["depth"] >= min_depth].pivot_table(index=CELL, columns="model", values="error_lca")
    return (wide["hamn"] - wide[baseline]).dropna().to_numpy()


def clean_means(clean: pd.DataFrame) -> dict[str, dict[tuple[int, int], float]]:
    """model -> (b, D) -> the mean over seeds of the noise-free accuracy of every stored leaf."""
    mean = clean.groupby(["model", "branching", "depth"])["accuracy"].mean()
    out: dict[str, dict[tuple[int, int], float]] = {}
    for (model, b, d), v in mean.items():
        out.setdefault(str(model), {})[int(b), int(d)] = float(v)
    return out


def seed_values(table: pd.DataFrame, branching: int, depth: int, column: str) -> np.ndarray:
    """``column`` of the cell (b, D), one value per seed in seed order (so two tables' values pair by seed)."""
    return table[(table["branching"] == branching) & (table["depth"] == depth)].sort_values("seed")[column].to_numpy()
