"""Figures, one function each, on matplotlib's object API (``paperdag.io.new_figure``; no pyplot state)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from paperdag.common.stats import mean_ci
from paperdag.io import new_figure

COLORS = {"daif": "tab:red", "daif_nig": "tab:purple", "daif_lam0_eps": "tab:orange", "daif_lam0_ps": "tab:green", "qrdqn": "tab:blue"}
LABELS = {"daif": "DAIF (free energy, ensemble)", "daif_nig": "DAIF (free energy, NIG critic)", "daif_lam0_eps": "lambda=0, epsilon-greedy",
          "daif_lam0_ps": "lambda=0, posterior sampling", "qrdqn": "QR-DQN"}


def plot_learning_curves(curves: dict[str, dict[str, np.ndarray]], steps: dict[str, int], confidence: float) -> Figure:
    """One panel per task: normalised training return (per-seed curves [S, B]) against environment steps, the mean
    over seeds as a line and its t confidence interval as a band (the legend gives each agent's seed count: the NIG
    agent's competence stage runs more); 0 = best state-ignoring policy, 1 = optimal."""
    fig, axes = new_figure(4.2 * len(curves), 3.6, ncols=len(curves))
    for ax, (task, by_agent) in zip(np.atleast_1d(axes), curves.items(), strict=True):
        for agent, c in by_agent.items():
            bins = c.shape[1]
            x = (np.arange(bins) + 0.5) * steps[task] / bins
            iv = [mean_ci(c[:, b], confidence) for b in range(bins)]
            ax.plot(x, [i.mean for i in iv], color=COLORS[agent], label=f"{LABELS[agent]}, {c.shape[0]} seeds")
            ax.fill_between(x, [i.lo for i in iv], [i.hi for i in iv], color=COLORS[agent], alpha=0.2, lw=0)
        ax.axhline(0, color="k", lw=0.6, ls=":")
        ax.axhline(1, color="k", lw=0.6, ls="--")
        ax.set_title(f"{task} ({100 * confidence:g}% CI over seeds)", fontsize=9)
        ax.set_xlabel("environment steps")
        ax.set_ylabel("normalised return (0 trivial, 1 optimal)")
    np.atleast_1d(axes)[0].legend(fontsize=7, loc="best")
    return fig


def plot_aulc(aulc: dict[str, dict[str, np.ndarray]], confidence: float) -> Figure:
    """The AULC table as grouped bars: normalised AULC per task and agent, mean over seeds with its t interval,
    each bar labelled with its value (a task shows the agents trained on it)."""
    tasks = list(aulc)
    agents = list(dict.fromkeys(a for t in tasks for a in aulc[t]))
    fig, ax = new_figure(1.8 + 2.2 * len(tasks), 3.8)
    width = 0.8 / len(agents)
    for j, agent in enumerate(agents):
        on = [i for i, t in enumerate(tasks) if agent in aulc[t]]
        iv = [mean_ci(aulc[tasks[i]][agent], confidence) for i in on]
        x = np.array(on) + (j - (len(agents) - 1) / 2) * width
        means = np.array([i.mean for i in iv])
        err = np.array([[m - i.lo for m, i in zip(means, iv, strict=True)],
                        [i.hi - m for m, i in zip(means, iv, strict=True)]])
        ax.bar(x, means, width, yerr=err, color=COLORS[agent], label=LABELS[agent], capsize=2)
        for xi, m in zip(x, means, strict=True):
            ax.text(xi, max(m, 0) + 0.02, f"{m:.2f}", ha="center", va="bottom", fontsize=6, rotation=90)
    ax.set_xticks(range(len(tasks)), tasks)
    ax.set_ylabel("normalised AULC")
    ax.axhline(0, color="k", lw=0.6)
    ax.set_title(f"area under the learning curve (mean, {100 * confidence:g}% CI over seeds)", fontsize=9)
    ax.legend(fontsize=7)
    return fig
