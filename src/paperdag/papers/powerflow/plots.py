"""The four figures of the evaluate stage, one function each, on matplotlib's object API (no pyplot state)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from paperdag.common.stats import Interval
from paperdag.io import new_figure

COLORS = {"traj": "tab:red", "length": "tab:blue", "entropy": "tab:brown",
          "self_certainty": "tab:pink", "majority": "tab:olive", "grpo": "tab:green", "base": "k"}


def _color(method: str) -> str:
    return COLORS[method.split("_")[1] if method.startswith("tb_") else method]


def plot_kl_curves(curves: dict[str, dict[str, np.ndarray]]) -> Figure:
    """Exact KL(pi || own target) over updates for each TB run: mean over seeds, band = min..max over seeds."""
    fig, axes = new_figure(10, 3.8, ncols=2)
    for ax, power in zip(axes, ("sharpen", "flatten"), strict=True):
        for method, c in curves.items():
            if method.endswith(power):
                ax.semilogy(c["step"], c["mean"], color=_color(method), label=method)
                ax.fill_between(c["step"], c["min"], c["max"], color=_color(method), alpha=0.2)
        ax.set_xlabel("update")
        ax.set_ylabel("exact KL(pi || target) (nats, mean over prompts)")
        ax.set_title(f"alpha {'> 1' if power == 'sharpen' else '< 1'}: each TB variant vs its own target", fontsize=9)
        ax.legend(fontsize=7)
    return fig


def plot_pareto(s: dict[str, dict[str, Interval]], base: dict[str, float], targets: dict[str, dict[str, float]],
                aligned: dict[str, float]) -> Figure:
    """Exact accuracy vs entropy per method (mean, t-interval bars over seeds); hollow: each TB run's exact target;
    the aligned (GRPO-tuned) model and its flattening by PowerFlow (alpha < 1), with that target (means over seeds)."""
    fig, ax = new_figure(6.5, 4.8)
    for method, m in s.items():
        marker = "o" if method.endswith("sharpen") else "s" if method.endswith("flatten") else "^"
        ax.errorbar(m["entropy"].mean, m["accuracy"].mean, xerr=[[m["entropy"].mean - m["entropy"].lo],
                    [m["entropy"].hi - m["entropy"].mean]], yerr=[[m["accuracy"].mean - m["accuracy"].lo],
                    [m["accuracy"].hi - m["accuracy"].mean]], fmt=marker, color=_color(method), label=method, ms=6)
        if method in targets:
            ax.plot(targets[method]["entropy"], targets[method]["accuracy"], marker, mfc="none", color=_color(method),
                    ms=10)
    ax.plot(base["entropy"], base["accuracy"], "*", color="k", ms=14, label="base model")
    ax.annotate("", (aligned["entropy"], aligned["accuracy"]), (aligned["aligned_entropy"], aligned["aligned_accuracy"]),
                arrowprops={"arrowstyle": "->", "color": "tab:purple"})
    ax.plot(aligned["aligned_entropy"], aligned["aligned_accuracy"], "P", color="tab:purple", ms=9,
            label="aligned (GRPO) model")
    ax.plot(aligned["entropy"], aligned["accuracy"], "D", color="tab:purple", ms=7, label="aligned, flattened")
    ax.plot(aligned["target_entropy"], aligned["target_accuracy"], "D", mfc="none", color="tab:purple", ms=11)
    ax.set_xlabel("exact entropy of pi(.|q) (nats, mean over prompts)")
    ax.set_ylabel("exact accuracy")
    ax.set_title("accuracy vs diversity (o alpha > 1, s alpha < 1, ^ baselines; hollow = exact target)", fontsize=9)
    ax.legend(fontsize=6, ncol=2)
    return fig


def plot_lengths(dists: dict[str, np.ndarray]) -> Figure:
    """P(k content tokens) of the base model and of each method (mean over seeds), alpha > 1 and alpha < 1."""
    fig, axes = new_figure(11, 3.8, ncols=2)
    groups = {"sharpen": [m for m in dists if not m.endswith("flatten") and m != "base"],
              "flatten": [m for m in dists if m.endswith("flatten")]}
    for ax, (power, methods) in zip(axes, groups.items(), strict=True):
        shown = ["base", *methods]
        width = 0.8 / len(shown)
        for i, method in enumerate(shown):
            k = np.arange(len(dists[method]))
            ax.bar(k + (i - (len(shown) - 1) / 2) * width, dists[method], width, color=_color(method),
                   label=method, alpha=1.0 if method in ("base", f"tb_length_{power}") else 0.6)
        ax.set_xlabel("response length k (content tokens before EOS)")
        ax.set_ylabel("probability (exact, mean over prompts)")
        ax.set_title(f"length distributions, {'alpha > 1 and baselines' if power == 'sharpen' else 'alpha < 1'}",
                     fontsize=9)
        ax.legend(fontsize=6)
    return fig


def plot_diverse(div: dict) -> Figure:
    """The diverse variant in the (diversity among correct responses, quality) plane: D_div and the base model
    (stars), their exact alpha < 1 power targets (hollow, first), then each seed of TB toward the base's target
    and of GRPO (small markers) and their means."""
    fig, ax = new_figure(6.5, 4.8)
    for src, color in (("data", "tab:gray"), ("base", "k")):
        start, target = div["anchor"][src]["start"], div["anchor"][src]["target"]
        who = "D_div" if src == "data" else "base model"
        ax.plot(start["diversity"], start["quality"], "*", color=color, ms=14, label=who)
        ax.plot(target["diversity"], target["quality"], "s", mfc="none", color=color, ms=12,
                label=f"exact target {who}^{div['alpha']:g}")
        ax.annotate("", (target["diversity"], target["quality"]), (start["diversity"], start["quality"]),
                    arrowprops={"arrowstyle": "->", "color": color})
    for method, color, marker in (("tb_traj_flatten", "tab:red", "s"), ("grpo", "tab:green", "^")):
        r = div["runs"][method]
        ax.plot(r["diversity"], r["quality"], marker, color=color, ms=5, alpha=0.6)
        ax.plot(np.mean(r["diversity"]), np.mean(r["quality"]), marker, color=color, ms=10, label=method)
    ax.set_xlabel("exact entropy among correct responses (nats, mean over prompts)")
    ax.set_ylabel("exact quality P(correct)")
    ax.set_title("diverse variant: alpha < 1 target first, then trained runs (small: seeds)", fontsize=9)
    ax.legend(fontsize=7)
    return fig
