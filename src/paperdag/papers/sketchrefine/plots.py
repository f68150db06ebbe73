"""Figures, one function each, on matplotlib's object API (``paperdag.io.new_figure``; no pyplot state)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from paperdag.common.stats import Interval
from paperdag.io import new_figure

COLORS = {"sketchrefine": "tab:red", "hilbert": "tab:blue", "immutable": "tab:green", "whole_proof": "tab:gray"}
LABELS = {"emitted": "tokens emitted", "total": "total tokens (emitted + read)"}


def plot_pass_vs_budget(budgets: np.ndarray, curves: dict[str, dict[str, list[Interval]]],
                        claim_budget: dict[str, int]) -> Figure:
    """Pass rate (mean over proposer seeds, 95% CI band) against the budget per theorem, one panel per token count
    (``curves``: count -> method -> intervals), one line per method."""
    fig, axes = new_figure(11.0, 4.0, ncols=len(curves))
    for ax, (count, by_method) in zip(axes, curves.items(), strict=True):
        for method, curve in by_method.items():
            mean, lo, hi = (np.array([getattr(c, f) for c in curve]) for f in ("mean", "lo", "hi"))
            ax.plot(budgets, mean, color=COLORS.get(method), label=method, lw=2 if method == "sketchrefine" else 1.2)
            ax.fill_between(budgets, np.clip(lo, 0, 1), np.clip(hi, 0, 1), color=COLORS.get(method), alpha=0.15,
                            lw=0)
        name = "E" if count == "emitted" else "B"
        ax.axvline(claim_budget[count], color="k", ls=":", lw=1, label=f"claims' budget {name} ({claim_budget[count]})")
        ax.set_xlabel(f"budget per theorem ({LABELS[count]})")
        ax.set_ylabel("pass rate (re-verified proofs)")
        ax.set_ylim(0, 1.02)
        ax.set_title(f"pass rate vs budget in {LABELS[count]}", fontsize=9)
        ax.legend(fontsize=8, loc="lower right")
    return fig


def plot_cost(by_level: dict[str, dict[str, dict[int, float]]], reuse: dict[str, float]) -> Figure:
    """Left panels: mean tokens per solved theorem by number of hidden lemmas, one per token count. Right: share of
    proved subgoals kept."""
    fig, axes = new_figure(14.0, 4.0, ncols=len(by_level) + 1)
    for ax, (count, methods) in zip(axes, by_level.items(), strict=False):
        for method, levels in methods.items():
            ax.plot(list(levels), list(levels.values()), "o-", color=COLORS.get(method), label=method)
        ax.set_xlabel("hidden intermediate lemmas (difficulty)")
        ax.set_ylabel(f"mean tokens per solved theorem ({count})")
        ax.set_title(f"cost in {LABELS[count]}", fontsize=9)
        ax.legend(fontsize=8)
    right = axes[-1]
    right.bar(list(reuse), list(reuse.values()), color=[COLORS.get(m) for m in reuse])
    for i, v in enumerate(reuse.values()):
        right.text(i, v + 0.01, f"{v:.2f}", ha="center", fontsize=8)
    right.set_ylim(0, 1.1)
    right.set_ylabel("proved subgoals kept through an edit round")
    right.set_title("subgoal reuse", fontsize=9)
    return fig


VERDICT_CODE = {"holds": 1.0, "inconclusive": 0.0, "fails": -1.0}


def plot_grid(grid: dict[str, dict[str, str]]) -> Figure:
    """Verdict of every claim (rows) at every error-rate grid point (columns): green holds, grey inconclusive, red
    fails."""
    points = list(grid)
    ids = list(next(iter(grid.values())))
    codes = np.array([[VERDICT_CODE[grid[g][c]] for g in points] for c in ids])
    fig, ax = new_figure(3.0 + 0.9 * len(points), 1.2 + 0.32 * len(ids))
    ax.imshow(codes, cmap="RdYlGn", vmin=-1.5, vmax=1.5, aspect="auto")
    ax.set_xticks(range(len(points)), points, rotation=40, ha="right", fontsize=7)
    ax.set_yticks(range(len(ids)), ids, fontsize=7)
    for i, c in enumerate(ids):
        for j, g in enumerate(points):
            ax.text(j, i, grid[g][c][0], ha="center", va="center", fontsize=7)
    ax.set_title("verdict per error-rate grid point (h holds, i inconclusive, f fails)", fontsize=9)
    return fig
