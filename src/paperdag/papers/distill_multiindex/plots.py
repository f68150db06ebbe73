"""Figures, one function each, on matplotlib's object API (``paperdag.io.new_figure``; no pyplot state)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from paperdag.common.stats import mean_ci
from paperdag.io import new_figure

from .stats import PowerFit

CURVES = {"distilled": ("budgets", "tab:blue", "o-", "distilled (M1 = M2 = M/2)"),
          "random_subset": ("sizes", "tab:gray", "s-", "random subset (both phases, lam on validation)"),
          "random_phase1": ("sizes", "tab:orange", "^--", "random phase-1 points, real phase 2")}


def plot_error_vs_memory(runs: list[dict], e_ref: float, e_rf: float, tol: float, title: str) -> Figure:
    """Relative test error vs points stored per method (mean and 95% CI over the seeds' rows of compare.parquet),
    with the full-data level, the two targets (e_ref + tol; e_ref + tol / 2 for phase 1 alone), the random-feature
    and zero-predictor levels as horizontal lines; where a curve first crosses its target is the memory its
    compression ratio uses."""
    fig, ax = new_figure(7.8, 3.8)
    for method, (x, color, style, label) in CURVES.items():
        iv = [mean_ci([r[method][k] for r in runs]) for k in range(len(runs[0][x]))]
        mean = np.array([i.mean for i in iv])
        lo, hi = np.array([i.lo for i in iv]), np.array([i.hi for i in iv])
        ax.plot(runs[0][x], mean, style, color=color, ms=4, label=label)
        ax.fill_between(runs[0][x], np.maximum(lo, 1e-4), hi, color=color, alpha=0.2)
    ax.axhline(e_ref, color="k", ls="--", lw=1, label="full data (phase 1 + ridge)")
    ax.axhline(e_ref + tol, color="tab:green", ls="-.", lw=1, label=f"target e_ref + {tol:g}")
    ax.axhline(e_ref + tol / 2, color="tab:olive", ls="-.", lw=0.8, label=f"phase-1 target e_ref + {tol / 2:g}")
    ax.axhline(e_rf, color="tab:red", ls=":", lw=1, label="full data, no phase 1 (random features)")
    ax.axhline(1.0, color="k", ls=":", lw=0.8, label="zero predictor")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("points stored (each d + 1 numbers)")
    ax.set_ylabel("relative test error  MSE / Var y")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return fig


def plot_memory_scaling(rows: list[dict], fit: PowerFit | None, target: str) -> Figure:
    """Left: memory-to-``target`` vs r^2 d + L per grid run (colour: r, marker: L), log-log, with the fitted power
    law and a slope-1 guide through the data's geometric mean. Right: where the memory goes, the phase-1 and phase-2
    point counts M1*, M2* against r (jittered by L)."""
    fig, (ax, bx) = new_figure(9.6, 3.8, ncols=2)
    widths = sorted({r["width"] for r in rows})
    markers = dict(zip(widths, "osD^vP*X"))
    colors = dict(zip(sorted({r["r"] for r in rows}), ["tab:blue", "tab:orange", "tab:green", "tab:red"]))
    for row in rows:
        x = row["r"] ** 2 * row["d"] + row["width"]
        ax.scatter(x, row["memory"], marker=markers[row["width"]], color=colors[row["r"]], s=30)
    for r, c in colors.items():
        ax.scatter([], [], color=c, label=f"r = {r}")
    for L, m in markers.items():
        ax.scatter([], [], marker=m, color="k", label=f"L = {L}")
    x = np.array([r["r"] ** 2 * r["d"] + r["width"] for r in rows], float)
    y = np.array([r["memory"] for r in rows], float)
    grid = np.geomspace(x.min(), x.max(), 50)
    if fit is not None:
        ax.plot(grid, np.exp(fit.intercept) * grid**fit.slope.mean, "k-", lw=1,
                label=f"fit: exponent {fit.slope.mean:.2f} [{fit.slope.lo:.2f}, {fit.slope.hi:.2f}]")
    ax.plot(grid, np.exp(np.mean(np.log(y)) - np.mean(np.log(x))) * grid, "k:", lw=1, label="exponent 1")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("r^2 d + L")
    ax.set_ylabel("memory to target (numbers)")
    ax.set_title(f"target {target}", fontsize=9)
    ax.legend(fontsize=6, ncol=2, loc="upper left")
    for row in rows:
        jitter = 0.08 * (widths.index(row["width"]) - (len(widths) - 1) / 2)
        bx.scatter(row["r"] + jitter - 0.05, row["m1"], color="tab:blue", marker=markers[row["width"]], s=20)
        bx.scatter(row["r"] + jitter + 0.05, row["m2"], color="tab:orange", marker=markers[row["width"]], s=20)
    bx.scatter([], [], color="tab:blue", label="M1* (phase 1, gradient matching)")
    bx.scatter([], [], color="tab:orange", label="M2* (phase 2, performance matching)")
    bx.set_xticks(sorted(colors))
    bx.set_xlabel("intrinsic dimension r")
    bx.set_ylabel("distilled points needed")
    bx.legend(fontsize=7)
    return fig
