"""Figures, one function each, on matplotlib's object API (``paperdag.io.new_figure``; no pyplot state)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paperdag.io import new_figure


def plot_loss(losses: dict[int, list[float]], title: str) -> Figure:
    """The DDPM training loss of each training seed (dict key), as a 20-step moving mean."""
    fig, ax = new_figure(5, 3)
    for seed, curve in losses.items():
        ax.plot(np.convolve(curve, np.ones(20) / 20, mode="valid"), lw=0.8, label=f"seed {seed}")
    ax.legend(fontsize=7)
    ax.set_xlabel("step")
    ax.set_ylabel("DDPM loss (20-step mean)")
    ax.set_title(title)
    return fig


def plot_chirality(native: dict[str, float], mirrored: dict[str, float]) -> Figure:
    """Bars of the designs' L-residue ratio per variant (dict key), on native (L) and mirrored (D) targets."""
    fig, ax = new_figure(5, 3)
    x = np.arange(2)
    for i, v in enumerate(native):
        ax.bar(x + 0.35 * i, [native[v], mirrored[v]], 0.35, label=v)
    ax.set_xticks(x + 0.175, ["native L target", "mirrored D target"])
    ax.set_ylabel("L-residue ratio of designs")
    ax.axhline(0.5, color="grey", lw=0.5)
    ax.legend()
    return fig


def plot_fullatom(table: pd.DataFrame) -> Figure:
    """Per candidate: interaction energy after minimisation (kJ/mol; before it, side chains placed on the design,
    the energies are clash-dominated, 1e4-1e13) and heavy-atom clashes before and after."""
    fig, axes = new_figure(8, 3, ncols=2)
    x = np.arange(len(table))
    axes[0].bar(x, table["interaction_after"], 0.6, color="tab:orange")
    axes[0].set_ylabel("interaction energy after (kJ/mol)")
    axes[0].axhline(0.0, color="grey", lw=0.5)
    axes[1].bar(x - 0.2, table["clashes_before"], 0.4, label="before")
    axes[1].bar(x + 0.2, table["clashes_after"], 0.4, label="after minimisation")
    axes[1].set_ylabel("heavy-atom clashes")
    axes[1].legend(fontsize=7)
    for ax in axes:
        ax.set_xticks(x, table["id"], rotation=90, fontsize=7)
    fig.suptitle("full-atom D-peptide candidates (amber14, minimised in mirror space)")
    return fig
