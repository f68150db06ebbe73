"""Figures, one function each, on matplotlib's object API (``paperdag.io.new_figure``; no pyplot state)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paperdag.common.stats import Interval
from paperdag.io import new_figure

from .models import METHODS
from .params import ClaimParams

COLORS = {"p0": "tab:gray", "q1": "tab:olive", "q2": "tab:cyan", "q_full": "tab:red", "cp_delta": "tab:orange",
          "cp_k": "tab:purple", "scp_delta_r": "tab:blue"}


def plot_bounds(prompts: pd.DataFrame, keep_mass: float) -> Figure:
    """Sequence-level certificates k_x (nats) of every protected model on single-shard canary prompts, against the
    shard models (with the minimax bound K*_x) and against p0; one box per model."""
    fig, axes = new_figure(9, 3.6, ncols=2)
    single = prompts[(prompts["where"] != "both")
                     & ((prompts["method"] != "scp_delta_r") | (prompts["keep_mass"] == keep_mass))]
    for ax, col, title in zip(axes, ("k", "k_base"), ("safe: the shard models (max_j)", "safe: the base model p0"),
                              strict=True):
        data = [single.loc[single["method"] == m, col].to_numpy() for m in METHODS]
        box = ax.boxplot(data, patch_artist=True, tick_labels=list(METHODS))
        for patch, method in zip(box["boxes"], METHODS, strict=True):
            patch.set_facecolor(COLORS[method])
        if col == "k":
            mm = single.drop_duplicates(["seed", "canary"])["minimax"].median()
            ax.axhline(mm, color="k", ls="--", lw=1, label=f"minimax bound K* (median {mm:.2f})")
            ax.legend(fontsize=7)
        ax.set_title(title, fontsize=9)
        ax.tick_params(axis="x", labelrotation=30, labelsize=7)
    axes[0].set_ylabel("k_x = max over codes of log P / Q (nats)")
    return fig


def plot_sparsity(grid: list[float], table: pd.DataFrame, kept: np.ndarray, nll: np.ndarray, gap: np.ndarray,
                  p: ClaimParams) -> Figure:
    """Along the keep_mass sweep (mean over seeds), against the kept fraction |S| / V: SCP-Delta_r's median
    certificate against the shard models and against p0, and its NLL above the full shift's (keep_mass 1) as a share
    of the gap p0 - q_full, with the preservation limit (min_effect_share)."""
    fig, axes = new_figure(9, 3.4, ncols=2)
    frac = np.maximum(kept.mean(0), 1e-4)  # keep_mass 0 (p0) keeps nothing: drawn at 1e-4 on the log axis
    for col, label in (("k_scp", "against the shard models"), ("kb_scp", "against p0")):
        axes[0].plot(frac, [table[f"{col}@{km:g}"].mean() for km in grid], "o-", label=label)
    loss = ((nll - nll[:, -1:]) / gap[:, None]).mean(0)
    axes[1].plot(frac, loss, "o-", color=COLORS["scp_delta_r"])
    for f, v, km in zip(frac, loss, grid, strict=True):
        axes[1].annotate(f"{km:g}", (f, v), fontsize=6, textcoords="offset points", xytext=(2, 3))
    axes[1].axhline(p.min_effect_share, color="k", ls="--", lw=1, label="preserved below")
    axes[0].set_ylabel("median k_x (nats)")
    axes[1].set_ylabel("(NLL - full shift's) / (p0 - q_full)")
    for ax in axes:
        ax.axvline(p.max_sparse_fraction, color="gray", ls=":", lw=1, label="'small subset' limit")
        ax.set_xscale("log")
        ax.set_xlabel("kept fraction |S| / V (labels: keep_mass)")
        ax.legend(fontsize=7)
    return fig


def plot_exposure(iv: dict[str, Interval], models: tuple[str, ...], log2_space: float) -> Figure:
    """Mean exposure (bits, 95% CI over seeds) of single-shard and duplicated canaries under every model."""
    fig, ax = new_figure(7, 3.6)
    x = np.arange(len(models))
    for off, group, hatch in ((-0.2, "single", ""), (0.2, "dup", "//")):
        keys = [f"exposure_{m}_{group if m not in ('q1', 'q2') or group == 'dup' else 'own'}" for m in models]
        means = [iv[k].mean for k in keys]
        err = [[iv[k].mean - iv[k].lo for k in keys], [iv[k].hi - iv[k].mean for k in keys]]
        ax.bar(x + off, means, 0.4, yerr=err, color=[COLORS[m] for m in models], hatch=hatch, edgecolor="k",
               label={"single": "single-shard canaries (q_i: its own)", "dup": "duplicated canaries"}[group])
    ax.axhline(log2_space, color="k", ls="--", lw=1, label="memorised (log2 |space|)")
    ax.axhline(np.log2(np.e), color="k", ls=":", lw=1, label="chance (log2 e)")
    ax.set_xticks(x, models, fontsize=8)
    ax.set_ylabel("exposure (bits)")
    ax.legend(fontsize=7, loc="upper right")
    return fig


def plot_utility(iv: dict[str, Interval]) -> Figure:
    """Held-out perplexity (95% CI over seeds) of the base, shard, unprotected and protected models."""
    fig, ax = new_figure(5.5, 3.4)
    models = [k.removeprefix("ppl_") for k in iv if k.startswith("ppl_") and k.removeprefix("ppl_") in COLORS]
    means = [iv[f"ppl_{m}"].mean for m in models]
    err = [[iv[f"ppl_{m}"].mean - iv[f"ppl_{m}"].lo for m in models], [iv[f"ppl_{m}"].hi - iv[f"ppl_{m}"].mean
                                                                          for m in models]]
    ax.bar(models, means, yerr=err, color=[COLORS[m] for m in models])
    ax.set_yscale("log")
    ax.set_ylabel("held-out perplexity (per byte)")
    ax.tick_params(axis="x", labelrotation=30, labelsize=8)
    return fig
