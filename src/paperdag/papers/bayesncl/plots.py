"""Figures, one function each, on matplotlib's object API (``paperdag.io.new_figure``; no pyplot state)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from paperdag.common.stats import Interval
from paperdag.io import new_figure

from .interpret import active_dims, purity, top_samples

COLOURS = {"untrained": "tab:gray", "simclr": "tab:blue", "ncl": "tab:orange", "bayesncl": "tab:green",
           "supervised": "black"}


def plot_summary(summary: dict[tuple[str, str, str], Interval], datasets: list[str], methods: list[str],
                 untrained: str, supervised: str) -> Figure:
    """Bars (seed mean, 95% t-interval) of semantic consistency over all activated samples, background-dimension
    share and probe accuracy (with the untrained encoder and the supervised upper bound)."""
    panels = (("consistency", "semantic consistency (all activated)"),
              ("background_share", "background-dimension share"), ("probe_acc", "linear-probe accuracy"))
    fig, axes = new_figure(12, 3.6, ncols=3)
    for ax, (key, title) in zip(axes, panels, strict=True):
        shown = methods if key != "probe_acc" else [untrained, *methods, supervised]
        width = 0.8 / len(shown)
        for j, m in enumerate(shown):
            v = [summary[d, m, key] for d in datasets]
            x = np.arange(len(datasets)) + (j - (len(shown) - 1) / 2) * width
            ax.bar(x, [i.mean for i in v], width, color=COLOURS[m], label=m,
                   yerr=np.array([[i.mean - i.lo for i in v], [i.hi - i.mean for i in v]]), capsize=3)
        ax.set_xticks(range(len(datasets)), datasets)
        ax.set_title(title, fontsize=10)
    axes[2].legend(fontsize=8)
    return fig


def plot_top_activations(acts: dict[tuple[str, str], np.ndarray], dataset: str, methods: list[str], images: np.ndarray,
                         label: np.ndarray, n_dims: int, n_top: int, m: int, tau: float) -> Figure:
    """For each method (seed 0), the ``n_dims`` active dimensions of largest mean activation, each as a row of its
    ``n_top`` top-activating test images, titled with the class purity of its top-m images."""
    fig, axes = new_figure(n_top * 0.55 + 1.2, len(methods) * n_dims * 0.6 + 0.6, ncols=n_top,
                           nrows=len(methods) * n_dims)
    axes = np.asarray(axes).reshape(len(methods) * n_dims, n_top)
    for i, method in enumerate(methods):
        f = acts[dataset, method]
        dims = np.flatnonzero(active_dims(f, m, tau))
        dims = dims[np.argsort(-f[:, dims].mean(0), kind="stable")][:n_dims]
        top = top_samples(f[:, dims], m) if len(dims) else np.zeros((0, m), dtype=int)
        share = purity(top, label)[0] if len(dims) else []
        for j in range(n_dims):
            row = axes[i * n_dims + j]
            for k, ax in enumerate(row):
                ax.set_xticks([])
                ax.set_yticks([])
                if j < len(dims):
                    ax.imshow(images[top[j, k]].transpose(1, 2, 0))
            if j < len(dims):
                row[0].set_ylabel(f"{method}\nd{dims[j]} {share[j]:.2f}", fontsize=6, rotation=0, ha="right",
                                  va="center")
    fig.suptitle(f"{dataset}: top-activating test images\n(row label: method, dim, class purity of top {m})",
                 fontsize=7)
    return fig
