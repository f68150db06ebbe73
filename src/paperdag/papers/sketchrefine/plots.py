"""Figures, one function each, on matplotlib's object API (``paperdag.io.new_figure``; no pyplot state)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from paperdag.common.stats import Interval
from paperdag.io import new_figure

COLORS = {"sketchrefine": "tab:red", "hilbert": "tab:blue", "immutable": "tab:green", "whole_proof": "tab:gray"}


def plot_pass_vs_budget(budgets: np.ndarray, curves: dict[str, list[Interval]], claim_budget: int) -> Figure:
    """Pass rate (mean over proposer seeds, 95% CI band) against the token budget per theorem, one line per method."""
    fig, ax = new_figure(6.0, 4.0)
    for method, curve in curves.items():
        mean, lo, hi = (np.array([getattr(c, f) for c in curve]) for f in ("mean", "lo", "hi"))
        ax.plot(budgets, mean, color=COLORS.get(method), label=method, lw=2 if method == "sketchrefine" else 1.2)
        ax.fill_between(budgets, np.clip(lo, 0, 1), np.clip(hi, 0, 1), color=COLORS.get(method), alpha=0.15, lw=0)
    ax.axvline(claim_budget, color="k", ls=":", lw=1, label=f"claims' budget ({claim_budget})")
    ax.set_xlabel("token budget per theorem (tokens emitted by the proposer)")
    ax.set_ylabel("pass rate (re-verified proofs)")
    ax.set_ylim(0, 1.02)
    ax.set_title("pass rate vs token budget, same proposer and checker", fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    return fig


def plot_cost(by_level: dict[str, dict[int, float]], reuse: dict[str, float]) -> Figure:
    """Left: mean tokens per solved theorem by number of hidden lemmas. Right: share of proved subgoals kept."""
    fig, (left, right) = new_figure(10.0, 4.0, ncols=2)
    for method, levels in by_level.items():
        left.plot(list(levels), list(levels.values()), "o-", color=COLORS.get(method), label=method)
    left.set_xlabel("hidden intermediate lemmas (difficulty)")
    left.set_ylabel("mean tokens per solved theorem (solved runs)")
    left.set_title("token cost grows with difficulty", fontsize=9)
    left.legend(fontsize=8)
    right.bar(list(reuse), list(reuse.values()), color=[COLORS.get(m) for m in reuse])
    for i, v in enumerate(reuse.values()):
        right.text(i, v + 0.01, f"{v:.2f}", ha="center", fontsize=8)
    right.set_ylim(0, 1.1)
    right.set_ylabel("proved subgoals kept through an edit round")
    right.set_title("subgoal reuse", fontsize=9)
    return fig
