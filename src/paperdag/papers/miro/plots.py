"""Figures, one function each, on matplotlib's object API (``paperdag.io.new_figure``; no pyplot state)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from paperdag.io import new_figure

COLOURS = {"miro": "tab:red", "base": "tab:gray", "filter": "tab:blue", "single": "tab:green"}


def plot_reward_curves(curves: dict[str, dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]]) -> Figure:
    """One panel per score: mean over seeds against training step per method, with the across-seed CI band.
    ``curves[score][method]`` = (steps, mean, half-width)."""
    fig, axes = new_figure(12, 5.5, ncols=4, nrows=2)
    for ax, (key, by_method) in zip(axes.flat, curves.items(), strict=False):
        for m, (steps, mean, half) in by_method.items():
            ax.plot(steps, mean, "-o", ms=2.5, color=COLOURS.get(m), label=m)
            ax.fill_between(steps, mean - half, mean + half, color=COLOURS.get(m), alpha=0.15, lw=0)
        ax.set_title(key.replace("_", " "), fontsize=9)
        ax.set_xlabel("training step", fontsize=8)
    for ax in list(axes.flat)[len(curves):]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize=7)
    return fig


def plot_samples(grids: dict[str, np.ndarray], captions: list[str]) -> Figure:
    """Rows: methods (and the training data's clean render); columns: evaluation captions. Images n x 3 x H x W."""
    fig, axes = new_figure(1.3 * len(captions), 1.4 * len(grids) + 0.6, ncols=len(captions), nrows=len(grids))
    for r, (name, images) in enumerate(grids.items()):
        for c, ax in enumerate(axes[r]):
            ax.imshow(images[c].transpose(1, 2, 0), interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            if c == 0:
                ax.set_ylabel(name, fontsize=9)
            if r == 0:
                ax.set_title(captions[c].replace(" a ", "\n"), fontsize=6)
    return fig


def plot_control(levels: dict[str, np.ndarray], control: dict[str, np.ndarray]) -> Figure:
    """Reward j of MIRO's samples against its target bin r_j (others at the top bin): per seed and their mean."""
    fig, axes = new_figure(3 * len(control), 3, ncols=len(control))
    for ax, (name, per_seed) in zip(np.atleast_1d(axes), control.items(), strict=True):
        for row in per_seed:
            ax.plot(levels[name], row, color="tab:red", alpha=0.3, lw=1)
        ax.plot(levels[name], per_seed.mean(0), "-o", color="tab:red", label="mean over seeds")
        ax.set_xlabel(f"target bin r_{name}", fontsize=8)
        ax.set_title(f"{name} of samples", fontsize=9)
    np.atleast_1d(axes)[0].legend(fontsize=7)
    return fig


def plot_final(z: dict[str, dict[str, float]]) -> Figure:
    """Grouped bars: mean standardised reward z (0 = the training data's mean) at the end of training, per method."""
    fig, ax = new_figure(8, 3.4)
    methods = list(z)
    rewards = list(z[methods[0]])
    width = 0.8 / len(methods)
    for k, m in enumerate(methods):
        ax.bar(np.arange(len(rewards)) + k * width, [z[m][r] for r in rewards], width, label=m,
               color=COLOURS.get(m))
    ax.set_xticks(np.arange(len(rewards)) + 0.4 - width / 2, rewards)
    ax.axhline(0, color="k", lw=0.8)
    ax.set_ylabel("z = (reward - data mean) / data std")
    ax.legend(fontsize=7, ncols=len(methods))
    return fig
