"""Figures of the evaluate stage, one function each, on matplotlib's object API (``paperdag.io.new_figure``)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from matplotlib.figure import Figure

from paperdag.io import new_figure

from .records import by_seed

COLORS = {"residual": "tab:gray", "hc": "tab:red", "mhc": "tab:blue"}
LABELS = {"residual": "residual", "hc": "HC", "mhc": "mHC"}
LINES = {"base": "-", "stress0": "--", "stress1": ":", "narrow": "-."}


def _seed_lines(ax, table: pa.Table, x: str, y: str, kind: str, smooth: int = 1, ls: str = "-",
                label: str | None = "") -> None:
    """One thin line per seed, the first one labelled (``label``, by default the connection's); a moving average of
    ``smooth`` points."""
    xs, ys = by_seed(table, x), by_seed(table, y)
    for i, seed in enumerate(sorted(ys)):
        v = np.convolve(ys[seed], np.ones(smooth) / smooth, mode="valid") if smooth > 1 else ys[seed]
        ax.plot(xs[seed][len(xs[seed]) - len(v):], v, color=COLORS[kind], lw=1, alpha=0.8, ls=ls,
                label=(LABELS[kind] if label == "" else label) if i == 0 else None)


def plot_gain(evals: dict[str, dict[str, pa.Table]], hc_gain_min: float) -> Figure:
    """Composite forward (left) and backward (right) gain of prod H_res vs step, log scale, one line per seed and
    cell of each connection: solid the base cell, dashed and dotted the stress cells."""
    fig, axes = new_figure(10, 3.8, ncols=2)
    for ax, col, title in zip(axes, ("gain_forward", "gain_backward"), ("forward: max abs row sum",
                                                                      "backward: max abs column sum"), strict=True):
        for kind, cells in evals.items():
            for cell, table in cells.items():
                if cell != "narrow":
                    _seed_lines(ax, table, "step", col, kind, ls=LINES[cell],
                                label=f"{LABELS[kind]} {cell}" if kind != "residual" or cell == "base" else None)
        ax.axhline(hc_gain_min, color="k", ls=":", lw=1, label=f"claim threshold {hc_gain_min:g}")
        ax.set_yscale("log")
        ax.set_xlabel("step")
        ax.set_ylabel("composite gain (worst token)")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=6)
    return fig


def plot_losses(steps: dict[str, pa.Table], evals: dict[str, pa.Table], unigram: float, baseline: float,
                label: str) -> Figure:
    """Left: training loss (moving average over 10 steps). Right: validation loss. Both with the unigram and the
    strongest trivial baseline ``label`` (scored on the validation windows)."""
    fig, axes = new_figure(10, 3.8, ncols=2)
    for kind in steps:
        _seed_lines(axes[0], steps[kind], "step", "train_loss", kind, smooth=10)
        _seed_lines(axes[1], evals[kind], "step", "val_loss", kind)
    for ax, title in zip(axes, ("training loss (10-step average)", "validation loss"), strict=True):
        ax.axhline(unigram, color="k", ls=":", lw=1, label="unigram baseline")
        ax.axhline(baseline, color="k", ls="--", lw=1, label=f"{label} (strongest trivial baseline)")
        ax.set_xlabel("step")
        ax.set_ylabel("nats / byte")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)
    lo = min(float(np.min(t["val_loss"].to_numpy())) for t in evals.values())
    axes[1].set_ylim(min(lo, baseline) - 0.1, max(unigram + 0.3, lo + 0.5))  # the step-0 loss (~ln 256) is off the top
    return fig


def plot_grad_norms(steps: dict[str, dict[str, pa.Table]]) -> Figure:
    """Pre-clip global gradient norm per step, log scale, one panel per connection (shared y axis), its sweep cells
    as line styles (solid base, dashed and dotted the stress learning rates)."""
    fig, axes = new_figure(12, 3.4, ncols=len(steps))
    for ax, (kind, cells) in zip(axes, steps.items(), strict=True):
        for cell, table in cells.items():
            _seed_lines(ax, table, "step", "grad_norm", kind, ls=LINES[cell], label=cell)
        ax.set_yscale("log")
        ax.set_xlabel("step")
        ax.set_title(f"{LABELS[kind]}: gradient norm (pre-clip)", fontsize=9)
        ax.legend(fontsize=6)
    axes[0].set_ylabel("||g||")
    lims = [ax.get_ylim() for ax in axes]
    for ax in axes:
        ax.set_ylim(min(lo for lo, _ in lims), max(hi for _, hi in lims))
    return fig
