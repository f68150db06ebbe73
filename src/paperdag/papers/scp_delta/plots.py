"""Figures, one function each, on matplotlib's object API (``paperdag.io.new_figure``; no pyplot state)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from paperdag.common.stats import Interval
from paperdag.io import new_figure

from .models import METHODS

COLORS = {"p0": "tab:gray", "q1": "tab:olive", "q2": "tab:cyan", "q_full": "tab:red", "cp_delta": "tab:orange",
          "cp_k": "tab:purple", "scp_delta_r": "tab:blue"}
KINDS = ("single", "dup", "stdlib", "records")


def plot_bounds(cert: dict[str, list]) -> Figure:
    """Per-sequence summed Delta_max certificates (log scale), one panel per kind of sequence, one box per method."""
    fig, axes = new_figure(11, 3.4, ncols=len(KINDS))
    for ax, kind in zip(axes, KINDS, strict=True):
        data = [[max(v, 1e-6) for v, k, m in zip(cert["dmax"], cert["kind"], cert["method"], strict=True)
                 if k == kind and m == method] for method in METHODS]
        box = ax.boxplot(data, patch_artist=True, tick_labels=list(METHODS))
        for patch, method in zip(box["boxes"], METHODS, strict=True):
            patch.set_facecolor(COLORS[method])
        ax.set_yscale("log")
        ax.set_title({"single": "single-shard canaries", "dup": "duplicated canaries (no safe model)",
                      "stdlib": "generic: stdlib text", "records": "generic: held-out records"}[kind], fontsize=9)
        ax.tick_params(axis="x", labelrotation=45, labelsize=7)
    axes[0].set_ylabel("sum_t Delta_max(p || safe) (nats)")
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
