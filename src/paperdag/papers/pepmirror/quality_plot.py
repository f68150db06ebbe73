"""The quality-ratio figure of evaluate (its own module: plots.py is imported by the train stages, and a figure
of evaluate's must not re-key them)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from paperdag.io import new_figure


def plot_quality(seeds: dict[str, dict[int, float]], judged: dict[str, dict[str, object]], bar: float) -> Figure:
    """Per quality metric: the ratio axial / polar (clashes: polar / axial) of each training seed's mean over its
    targets on mirrored targets (dots), the crossed 95% interval of the pooled ratio (bar: seeds and targets random)
    and the non-inferiority bar."""
    fig, ax = new_figure(6, 3)
    for i, (k, per_seed) in enumerate(seeds.items()):
        ratio = judged[k]["ratio"]
        lo, hi = ratio["ci"]
        ax.errorbar([i], [ratio["mean"]], [[ratio["mean"] - lo], [hi - ratio["mean"]]], fmt="s", color="black",
                    capsize=4, label="pooled ratio, crossed 95% CI" if i == 0 else None)
        offsets = np.linspace(-0.2, 0.2, len(per_seed)) if len(per_seed) > 1 else np.zeros(1)
        ax.scatter(i + 0.3 + offsets / 2, list(per_seed.values()), s=14, color="tab:blue",
                   label="one training seed (mean over its targets)" if i == 0 else None)
    ax.axhline(bar, color="tab:red", lw=0.8, ls="--", label=f"non-inferiority bar {bar:g}")
    ax.axhline(1.0, color="grey", lw=0.5)
    ax.set_xticks(range(len(seeds)), [f"{k}\n({judged[k]['ratio']['of']})" for k in seeds], fontsize=7)
    ax.set_ylabel("quality ratio on mirrored targets")
    ax.legend(fontsize=6, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False)
    return fig
