"""The evaluate stage's figure, on matplotlib's object API (``paperdag.io.new_figure``; no pyplot state)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from paperdag.io import new_figure

from .analysis import Curves

COLORS = {"adamw": "tab:blue", "muon": "tab:orange", "normuon": "tab:green"}


def plot_curves(curves: dict[str, Curves], targets: list[float], baseline: float, label: str) -> Figure:
    """Validation loss (mean over seeds, min-max band, mean AdamW final loss as the target, the strongest trivial
    baseline ``label`` on the same windows) and the CV of the update's per-row norms against step, one line per
    optimizer."""
    fig, (ax_loss, ax_cv) = new_figure(11, 4, ncols=2)
    for name, runs in curves.items():
        steps = np.asarray(next(iter(runs.values()))["step"])
        for ax, key in ((ax_loss, "val_loss"), (ax_cv, "row_cv")):
            vals = np.asarray([r[key] for r in runs.values()], dtype=float)
            keep = np.isfinite(vals).all(axis=0)
            ax.plot(steps[keep], vals.mean(0)[keep], color=COLORS[name], label=f"{name} ({len(runs)} seeds)")
            ax.fill_between(steps[keep], vals.min(0)[keep], vals.max(0)[keep], color=COLORS[name], alpha=0.2)
    ax_loss.axhline(float(np.mean(targets)), color="gray", ls="--", lw=1, label="AdamW final (target)")
    ax_loss.axhline(baseline, color="k", ls=":", lw=1, label=f"{label} (strongest trivial baseline)")
    ax_loss.set(xlabel="step", ylabel="validation loss (nats/byte)", title="Validation loss")
    ax_cv.set(xlabel="step", ylabel="CV of per-row update norms", title="Neuron-wise update imbalance")
    for ax in (ax_loss, ax_cv):
        ax.legend()
        ax.grid(alpha=0.3)
    return fig
