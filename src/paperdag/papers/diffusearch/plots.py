"""Figures, one function each, on matplotlib's object API (``paperdag.io.new_figure``; no pyplot state)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from paperdag.common.stats import Interval
from paperdag.io import new_figure

from .analysis import Summary


def _bars(ax, values: dict[str, Interval], colors: list[str]) -> None:
    names = list(values)
    means = np.array([values[n].mean for n in names])
    err = np.array([[values[n].mean - values[n].lo for n in names], [values[n].hi - values[n].mean for n in names]])
    ax.bar(names, means, yerr=err, capsize=3, color=colors)
    ax.tick_params(axis="x", rotation=35, labelsize=8)


def plot_decoders(s: Summary) -> Figure:
    """Exact-match accuracy per decoder (mean and t-interval over seeds) beside forward passes per solved task."""
    fig, (ax, bx) = new_figure(10, 3.8, ncols=2)
    colors = ["tab:gray"] * (len(s.accuracy) - 1) + ["tab:red"]
    _bars(ax, s.accuracy, colors)
    ax.set_ylabel("exact-match accuracy (answer)")
    ax.set_ylim(0, 1)
    ax.set_title("accuracy (95% CI over seeds)")
    bx.bar(list(s.cost), list(s.cost.values()), color=colors)
    bx.set_yscale("log")
    bx.set_ylabel("forward passes per solved task")
    bx.tick_params(axis="x", rotation=35, labelsize=8)
    bx.set_title("cost")
    return fig


def plot_grid(s: Summary, c_grid: list[float], sim_grid: list[int]) -> Figure:
    """Heat map of DiffuSearch accuracy over exploration constant c (rows) and simulations per commit (columns)."""
    fig, ax = new_figure(4.8, 3.8)
    acc = np.array([[s.grid[f"mcts_c{c:g}_n{n}"].mean for n in sim_grid] for c in c_grid])
    im = ax.imshow(acc, cmap="viridis", origin="lower", aspect="auto")
    for i in range(len(c_grid)):
        for j in range(len(sim_grid)):
            ax.text(j, i, f"{acc[i, j]:.3f}", ha="center", va="center", color="w", fontsize=8)
    ax.set_xticks(range(len(sim_grid)), [str(n) for n in sim_grid])
    ax.set_yticks(range(len(c_grid)), [f"{c:g}" for c in c_grid])
    ax.set_xlabel("simulations per commit")
    ax.set_ylabel("exploration constant c")
    fig.colorbar(im, ax=ax, label="accuracy")
    return fig


def plot_orders(s: Summary) -> Figure:
    """Accuracy of DiffuSearch and left-to-right infilling on the tasks where DiffuSearch left the L2R order."""
    fig, ax = new_figure(4.5, 3.5)
    _bars(ax, {"left-to-right": s.deviated_l2r, "DiffuSearch": s.deviated_mcts}, ["tab:gray", "tab:red"])
    ax.set_ylim(0, 1)
    ax.set_ylabel("accuracy on deviated tasks")
    ax.set_title(f"{100 * s.sequential_share.mean:.0f}% of commits sequential; "
                 f"{100 * s.deviated_share:.0f}% of tasks deviate", fontsize=9)
    return fig
