"""Figures, one function each, on matplotlib's object API (``paperdag.io.new_figure``; no pyplot state)."""

from __future__ import annotations

import numpy as np
import torch
from matplotlib.figure import Figure

from paperdag.io import new_figure


def plot_accuracy_table(table: np.ndarray, schemes: list[str], defenses: list[str]) -> Figure:
    """Heat map of mean victim test accuracy, scheme (rows) x defense (columns) plus the across-defense average;
    lower is a stronger unlearnable example."""
    full = np.c_[table, table.mean(1)]
    fig, ax = new_figure(7.5, 4.2)
    im = ax.imshow(full, cmap="RdYlGn", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(len(defenses) + 1), [*defenses, "average"], rotation=30, ha="right")
    ax.set_yticks(range(len(schemes)), schemes)
    for i in range(full.shape[0]):
        for j in range(full.shape[1]):
            ax.text(j, i, f"{100 * full[i, j]:.0f}", ha="center", va="center", fontsize=8)
    ax.axvline(len(defenses) - 0.5, color="k", lw=1)
    ax.set_title("victim clean test accuracy (%) by training data x defense")
    fig.colorbar(im, ax=ax, fraction=0.04)
    return fig


def plot_examples(clean: torch.Tensor, perturbed: dict[str, torch.Tensor], amplify: float) -> Figure:
    """A few training images: clean, then each scheme's perturbed image (top) and its perturbation x' - x
    amplified by ``amplify`` around grey (bottom)."""
    n, names = len(clean), list(perturbed)
    fig, axes = new_figure(1.3 * (len(names) + 1), 1.3 * 2 * n, ncols=len(names) + 1, nrows=2 * n)
    for i in range(n):
        for j, name in enumerate(["clean", *names]):
            img = clean[i] if name == "clean" else perturbed[name][i]
            diff = (img - clean[i]) * amplify + 0.5
            for r, pic in ((2 * i, img), (2 * i + 1, diff)):
                axes[r, j].imshow(pic.clamp(0, 1).permute(1, 2, 0).numpy(), interpolation="nearest")
                axes[r, j].set_xticks([])
                axes[r, j].set_yticks([])
            if i == 0:
                axes[0, j].set_title(name, fontsize=8)
        axes[2 * i + 1, 0].set_ylabel(f"x'-x (x{amplify:g})", fontsize=7)
    return fig
