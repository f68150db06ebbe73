"""Figures, one function each, on matplotlib's object API (``paperdag.io.new_figure``; no pyplot state)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paperdag.common.stats import mean_ci
from paperdag.io import new_figure

STYLE = {"mhn": ("tab:gray", "s", "Euclidean MHN (raw patterns)"),
         "mhn_normed": ("tab:blue", "^", "Euclidean MHN (L2-normalised)"),
         "mhn_distance": ("tab:green", "v", "Euclidean distance softmax"),
         "hamn": ("tab:purple", "o", "HAMN (Poincare ball)")}


def _panels(n: int, height: float = 3.6) -> tuple[Figure, list]:
    fig, axes = new_figure(4.6 * n, height, ncols=n)
    return fig, list(np.atleast_1d(axes))


def _band(ax, sub: pd.DataFrame, column: str, model: str) -> None:
    """``column``'s mean over seeds and its 95% CI band against depth, in the model's style."""
    color, marker, label = STYLE[model]
    depths = sorted(sub["depth"].unique())
    ci = [mean_ci(sub[sub["depth"] == d][column].to_numpy()) for d in depths]
    ax.plot(depths, [c.mean for c in ci], marker=marker, color=color, label=label)
    ax.fill_between(depths, [c.lo for c in ci], [c.hi for c in ci], color=color, alpha=0.2)


def plot_accuracy_vs_depth(cells: pd.DataFrame, clean: pd.DataFrame, leaves: dict[tuple[int, int], int]) -> Figure:
    """Leaf-retrieval accuracy of noisy queries (mean and 95% CI over seeds) against tree depth, one panel per
    branching b; dashed: noise-free queries (storage); dotted: chance, 1 / #leaves."""
    bs = sorted(cells["branching"].unique())
    fig, axes = _panels(len(bs))
    for ax, b in zip(axes, bs, strict=True):
        for model, (color, marker, label) in STYLE.items():
            _band(ax, cells[(cells["branching"] == b) & (cells["model"] == model)], "accuracy", model)
            kept = clean[(clean["branching"] == b) & (clean["model"] == model)].groupby("depth")["accuracy"].mean()
            ax.plot(kept.index, kept.to_numpy(), "--", color=color, lw=1, label=f"{label}, noise-free")
        depths = sorted(cells[cells["branching"] == b]["depth"].unique())
        ax.plot(depths, [1 / leaves[b, d] for d in depths], "k:", lw=1, label="chance")
        ax.set_xticks(depths)
        ax.set_xlabel("tree depth D")
        ax.set_ylabel("leaf retrieval accuracy")
        ax.set_ylim(0, 1.02)
        ax.set_title(f"branching b={b} (noise calibrated to equal accuracy at D=2)", fontsize=8)
        ax.legend(fontsize=7)
    return fig


def plot_accuracy_by_level(levels: dict[int, dict[str, np.ndarray]], depth: dict[int, int]) -> Figure:
    """P(retrieved leaf has the right ancestor at level l) against l at the deepest tree, one panel per b."""
    bs = sorted(levels)
    fig, axes = _panels(len(bs))
    for ax, b in zip(axes, bs, strict=True):
        for model, acc in levels[b].items():
            color, marker, label = STYLE[model]
            ax.plot(range(len(acc)), acc, marker=marker, color=color, label=label)
        ax.set_xticks(range(depth[b] + 1))
        ax.set_xlabel("tree level l (0 = root, D = leaf)")
        ax.set_ylabel("accuracy at level l")
        ax.set_ylim(0, 1.02)
        ax.set_title(f"b={b}, D={depth[b]}: right ancestor at level l", fontsize=8)
        ax.legend(fontsize=7)
    return fig


def plot_error_lca(cells: pd.DataFrame) -> Figure:
    """Mean LCA level / D of (retrieved, true) leaf over wrong retrievals, per depth and model (higher = the wrong
    memory is closer in the tree), one panel per b."""
    bs = sorted(cells["branching"].unique())
    fig, axes = _panels(len(bs))
    for ax, b in zip(axes, bs, strict=True):
        for model, (color, marker, label) in STYLE.items():
            sub = cells[(cells["branching"] == b) & (cells["model"] == model)].dropna(subset=["error_lca"])
            mean = sub.groupby("depth")["error_lca"].mean()
            ax.plot(sub["depth"], sub["error_lca"], marker, color=color, alpha=0.35, ms=4)
            ax.plot(mean.index, mean.to_numpy(), marker=marker, color=color, label=label)
        ax.set_xticks(sorted(cells["depth"].unique()))
        ax.set_xlabel("tree depth D")
        ax.set_ylabel("LCA level / D on wrong retrievals")
        ax.set_ylim(0, 1)
        ax.set_title(f"b={b}: how close in the tree the wrong memory is", fontsize=8)
        ax.legend(fontsize=7)
    return fig


def plot_tolerance_vs_depth(cells: pd.DataFrame) -> Figure:
    """Noise tolerance rho_50 (the query noise at which a memory retrieves half its queries; mean of log rho_50 and
    its 95% CI over seeds) against tree depth, one panel per branching b."""
    bs = sorted(cells["branching"].unique())
    fig, axes = _panels(len(bs))
    for ax, b in zip(axes, bs, strict=True):
        for model in STYLE:
            _band(ax, cells[(cells["branching"] == b) & (cells["model"] == model)], "log_rho50", model)
        ax.set_xticks(sorted(cells["depth"].unique()))
        ax.set_xlabel("tree depth D")
        ax.set_ylabel("log rho_50 (noise at 50% retrieval)")
        ax.set_title(f"b={b}: noise tolerance against depth", fontsize=8)
        ax.legend(fontsize=7)
    return fig
