"""From per-query retrievals to per-cell accuracies, the depth trend of HAMN's advantage and error distances.

Per cell (model, b, D, seed): accuracy = P(retrieved leaf = source leaf); accuracy at level l = P(LCA level of
(retrieved, source) >= l), i.e. the retrieved leaf has the right ancestor at level l (level D = exact retrieval);
error LCA = mean LCA level / D over the wrong retrievals (1 would be the right leaf, 0 the root).
Advantage Delta(b, D, s) = accuracy_HAMN - accuracy_MHN on the same queries; its depth trend per seed is the OLS
slope of Delta on D, summarised over seeds by a t interval.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

CELL = ["branching", "depth", "seed"]


@dataclass(frozen=True)
class Interval:
    """mean and two-sided t confidence interval [lo, hi] of a sample (lo = hi = mean for one value)."""

    mean: float
    lo: float
    hi: float
    n: int

    def as_dict(self) -> dict[str, float | list[float]]:
        return {"mean": round(self.mean, 4), "ci95": [round(self.lo, 4), round(self.hi, 4)], "n": self.n}


def t_interval(values: np.ndarray, level: float = 0.95) -> Interval:
    """mean +- t_{level, n-1} s / sqrt(n)."""
    v = np.asarray(values, float)
    if len(v) < 2:
        return Interval(float(v.mean()), float(v.mean()), float(v.mean()), len(v))
    half = stats.t.ppf(0.5 + level / 2, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v))
    return Interval(float(v.mean()), float(v.mean() - half), float(v.mean() + half), len(v))


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


def advantage(cells: pd.DataFrame) -> pd.DataFrame:
    """Delta = accuracy_HAMN - accuracy_MHN per (b, D, seed)."""
    wide = cells.pivot_table(index=CELL, columns="model", values="accuracy").reset_index()
    return wide.assign(delta=wide["hamn"] - wide["mhn"])


def depth_slopes(adv: pd.DataFrame, branching: int) -> np.ndarray:
    """Per seed, the OLS slope of Delta on D over the depths of branching b."""
    sub = adv[adv["branching"] == branching]
    return np.array([np.polyfit(g["depth"], g["delta"], 1)[0] for _, g in sub.groupby("seed")])


def error_lca_gap(cells: pd.DataFrame, min_depth: int) -> np.ndarray:
    """error_lca_HAMN - error_lca_MHN per cell with D >= min_depth where both models made errors."""
    wide = cells[cells["depth"] >= min_depth].pivot_table(index=CELL, columns="model", values="error_lca")
    return (wide["hamn"] - wide["mhn"]).dropna().to_numpy()
