"""Figures, one function each, on matplotlib's object API (``paperdag.io.new_figure``; no pyplot state)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from paperdag.common.stats import mean_ci
from paperdag.io import new_figure


def plot_verifiers(acceptance: dict[str, dict[str, float]]) -> Figure:
    """Grouped bars: the fraction of lossy and of invertible rules each verifier accepts."""
    fig, ax = new_figure(5.0, 3.4)
    x = np.arange(len(acceptance))
    for off, (kind, color) in zip((-0.2, 0.2), (("lossy", "tab:red"), ("invertible", "tab:green"))):
        ax.bar(x + off, [acceptance[v][kind] for v in acceptance], 0.4, color=color, label=f"{kind} rules")
    ax.set_xticks(x, ["forward only", "single-sample cycle", "cycle + property"])
    for bars in ax.containers:
        ax.bar_label(bars, fmt="%.2f", fontsize=7)
    ax.set_ylabel("fraction accepted")
    ax.set_ylim(0, 1.3)
    ax.legend(fontsize=8, ncol=2, loc="upper center")
    ax.set_title("Which generated rules each verifier lets through", fontsize=9)
    return fig


def plot_information(ladders: Sequence[dict], rho: float) -> Figure:
    """Information ladder: #consistent programs (log) against input information (bits), one colour per symbol count
    m, one panel per dimension; each validated rule contributes one point per m; black: the geometric mean per m."""
    fig, axes = new_figure(10.0, 3.4, ncols=3)
    levels = sorted({r["m"] for r in ladders})
    colors = dict(zip(levels, ("tab:red", "tab:orange", "tab:olive", "tab:green", "tab:blue", "tab:purple") * 3))
    for ax, dim in zip(axes, (1, 2, 3)):
        for m in levels:
            sel = [r for r in ladders if r["dim"] == dim and r["m"] == m]
            ax.scatter([r["bits"] for r in sel], [r["consistent"] for r in sel], s=9, alpha=0.4, color=colors[m],
                       label=f"m = {m} symbols")
        means = [[np.mean(v) for v in zip(*[(r["bits"], np.log(r["consistent"])) for r in ladders
                                            if r["dim"] == dim and r["m"] == m])] for m in levels]
        ax.plot([b for b, _ in means], [np.exp(c) for _, c in means], "k-o", ms=4, label="geometric mean per m")
        ax.set_yscale("log")
        ax.set_title(f"{dim}D rules", fontsize=9)
        ax.set_xlabel("information of demo inputs [bits]")
    axes[0].set_ylabel("# DSL programs consistent with demos")
    axes[0].legend(fontsize=7)
    fig.suptitle(f"Consistent programs vs input information (within-rule Spearman rho = {rho:.2f})", fontsize=10)
    return fig


def plot_solvers(acc: dict[str, dict[str, np.ndarray]], acc_dims: dict[str, dict[int, np.ndarray]]) -> Figure:
    """Left: accuracy per solver on P0 and P1 (mean and 95% CI over benchmarks); right: P0 accuracy by dimension of
    each labelled series (solver and budget)."""
    fig, (left, right) = new_figure(9.0, 3.4, ncols=2)
    x = np.arange(len(acc))
    for off, phase, color in ((-0.2, "P0", "tab:blue"), (0.2, "P1", "tab:purple")):
        cis = [mean_ci(acc[s][phase]) for s in acc]
        left.bar(x + off, [c.mean for c in cis], 0.4, color=color, label=phase,
                 yerr=np.array([[c.mean - c.lo for c in cis], [c.hi - c.mean for c in cis]]), capsize=3)
    left.set_xticks(x, list(acc), fontsize=8)
    left.set_ylabel("exact-match accuracy")
    left.set_ylim(0, 1.05)
    left.legend(fontsize=8)
    width = 0.8 / len(acc_dims)
    for i, (solver, by_dim) in enumerate(acc_dims.items()):
        right.bar(np.arange(3) + (i - (len(acc_dims) - 1) / 2) * width, [np.nanmean(by_dim[d]) for d in (1, 2, 3)],
                  width, label=solver)
    right.set_xticks(np.arange(3), ["1D", "2D", "3D"])
    right.set_ylabel("P0 accuracy")
    right.set_ylim(0, 1.3)
    right.legend(fontsize=7, ncol=2, loc="upper center")
    return fig
