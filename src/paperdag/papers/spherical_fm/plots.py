"""Figures, one function each, on matplotlib's object API (``paperdag.io.new_figure``; no pyplot state)."""

from __future__ import annotations

import numpy as np
import torch
from matplotlib.figure import Figure

from paperdag.common.stats import Interval
from paperdag.io import new_figure

NAMES = {"icfm": "I-CFM", "otcfm": "OT-CFM", "sotcfm": "SOT-CFM", "sfm": "SFM"}
COLORS = {"icfm": "tab:gray", "otcfm": "tab:blue", "sotcfm": "tab:orange", "sfm": "tab:red", "real test": "k"}
PANELS = {"fd": "Frechet distance (lower better)", "one_nn": "1-NN two-sample acc. (0.5 best)",
          "precision": "precision", "recall": "recall", "label_tv": "label TV distance (lower better)"}


def _tile(images: torch.Tensor, per_row: int, channels: int) -> np.ndarray:
    """The first ``per_row`` flattened square uint8 images (grey, or RGB stored row-major as [side, side, 3]) side by
    side, with a 1-pixel white gap: [side, per_row (side + 1), channels]."""
    side = round((images.shape[1] / channels) ** 0.5)
    tiles = images[:per_row].reshape(-1, side, side, channels).numpy()
    pad = np.full((len(tiles), side, 1, channels), 255, np.uint8)
    return np.concatenate([np.concatenate([t, p], 1) for t, p in zip(tiles, pad, strict=True)], 1)


def plot_samples(samples: dict[str, dict[str, torch.Tensor]], steps: list[int], real: dict[str, torch.Tensor],
                 per_row: int = 12) -> Figure:
    """Per dataset: real test images, then one row of samples (seed 0, the same source noise) per generator and step
    count; photo crops (pixel and latent generators) in colour, digits in grey (dark ink)."""
    labels, rows = [], []
    for d, by_method in samples.items():
        channels = 1 if d in ("mnist", "digits") else 3  # photo crops, in pixel or latent space
        labels.append(f"{d}: real test")
        rows.append(_tile(real[d], per_row, channels))
        for m, by_steps in by_method.items():
            labels += [f"{NAMES[m]}, {k} steps" for k in steps]
            rows += [_tile(by_steps[j], per_row, channels) for j in range(len(steps))]
    fig, axes = new_figure(0.55 * per_row + 1.4, 0.52 * len(rows) + 0.3, nrows=len(rows))
    for ax, label, row in zip(axes, labels, rows, strict=True):
        if row.shape[2] == 3:
            ax.imshow(row)
        else:
            ax.imshow(255 - row[:, :, 0], cmap="gray", vmin=0, vmax=255)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_ylabel(label, rotation=0, ha="right", va="center", fontsize=7)
    return fig


def plot_metric_vs_steps(summary: dict[str, dict[tuple[str, int], dict[str, Interval]]], methods: list[str],
                         steps: list[int], reference: dict[str, dict[str, dict[str, float]]]) -> Figure:
    """Each metric (columns) against sampler steps per dataset (rows), mean over seeds with 95% CI bars; Gaussian and
    real-vs-real as lines."""
    fig, axes = new_figure(14, 3.2 * len(summary), nrows=len(summary), ncols=len(PANELS))
    axes = np.atleast_2d(axes)
    for row, (d, by) in zip(axes, summary.items(), strict=True):
        for ax, (metric, title) in zip(row, PANELS.items(), strict=True):
            for m in methods:
                cs = [by[(m, k)][metric] for k in steps]
                mean = np.array([c.mean for c in cs])
                err = np.array([[c.mean - c.lo for c in cs], [c.hi - c.mean for c in cs]])
                ax.errorbar(steps, mean, yerr=err, marker="o", ms=4, capsize=3, color=COLORS[m], label=NAMES[m])
            ax.axhline(reference[d]["gaussian"][metric], color="tab:purple", ls="--", lw=1, label="Gaussian fit")
            ax.axhline(reference[d]["real_train"][metric], color="k", ls=":", lw=1, label="real train vs test")
            ax.axhline(reference[d]["sphere_train"][metric], color="tab:red", ls="-.", lw=1,
                       label="train projected to S_R (SFM's floor)")
            ax.set_xscale("log")
            ax.minorticks_off()
            ax.set_xticks(steps, [str(k) for k in steps])
            ax.set_xlabel("sampler steps")
            ax.set_title(f"{d}: {title}", fontsize=9)
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncols=6, fontsize=8)
    return fig


def plot_budget_sweep(sweep: dict[int, dict[tuple[str, int], np.ndarray]], gaussian_fd: float, methods: list[str],
                      steps: list[int], competent: float) -> Figure:
    """FD / Gaussian FD (mean over seeds) against the training budget, one panel per sampler step count, with the
    fitted Gaussian (1) and the competence bound ``competent`` as lines."""
    fig, axes = new_figure(3.2 * len(steps), 3.0, ncols=len(steps))
    budgets = sorted(sweep)
    for ax, k in zip(np.atleast_1d(axes), steps, strict=True):
        for m in methods:
            ax.plot(budgets, [sweep[b][(m, k)].mean() / gaussian_fd for b in budgets], marker="o", color=COLORS[m],
                    label=NAMES[m])
        ax.axhline(1.0, color="tab:purple", ls="--", lw=1, label="Gaussian fit")
        ax.axhline(competent, color="k", ls=":", lw=1, label="competence bound")
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(budgets, [str(b) for b in budgets])
        ax.set_xlabel("training steps")
        ax.set_title(f"{k} sampler steps", fontsize=9)
    np.atleast_1d(axes)[0].set_ylabel("FD / Gaussian FD")
    np.atleast_1d(axes)[0].legend(fontsize=7)
    return fig


def plot_observation(observation: dict[str, dict[str, dict[str, float]]]) -> Figure:
    """Test accuracy of the original, sphere-projected and norm-only representations per dataset and pixel scale,
    with chance as a tick; the norm CV in each panel's title."""
    cases = [(d, s, r) for d, by in observation.items() for s, r in by.items()]
    fig, axes = new_figure(3.0 * len(cases), 3.0, ncols=len(cases))
    for ax, (d, s, r) in zip(np.atleast_1d(axes), cases, strict=True):
        kinds = ["original", "direction", "norm"]
        ax.bar(kinds, [r[f"acc_{k}"] for k in kinds], color=["tab:blue", "tab:red", "tab:gray"])
        ax.axhline(r["chance"], color="k", ls="--", lw=1, label="chance")
        ax.set_ylim(0, 1)
        ax.set_title(f"{d}, pixels in {'[-1,1]' if s == 'model' else '[0,1]'}\nnorm CV = {r['cv']:.3f}", fontsize=9)
    np.atleast_1d(axes)[0].set_ylabel("test accuracy")
    np.atleast_1d(axes)[0].legend(fontsize=7)
    return fig


def plot_labels(freqs: dict[str, dict[str, np.ndarray]], steps: int) -> Figure:
    """Per dataset, classifier-assigned label frequencies of each generator's samples at ``steps`` steps beside the
    test images'."""
    fig, axes = new_figure(7 * len(freqs), 3.0, ncols=len(freqs))
    for ax, (d, by) in zip(np.atleast_1d(axes), freqs.items(), strict=True):
        width = 0.8 / len(by)
        n = max(len(q) for q in by.values())
        for i, (name, q) in enumerate(by.items()):
            ax.bar(np.arange(len(q)) + (i - len(by) / 2 + 0.5) * width, q, width, color=COLORS[name],
                   label=NAMES.get(name, name))
        ax.set_xticks(range(n))
        ax.set_xlabel("class assigned by the classifier" + (" (photograph x quadrant)" if d == "photos" else ""))
        ax.set_ylabel("frequency")
        ax.set_title(f"{d}: label distribution of samples at {steps} steps (seed 0)", fontsize=9)
        ax.legend(fontsize=7, ncols=len(by))
    return fig
