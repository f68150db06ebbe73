"""Figures, one function each, on matplotlib's object API (``paperdag.io.new_figure``; no pyplot state)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from matplotlib.figure import Figure

from paperdag.io import new_figure

COLORS = {"trudi": "tab:blue", "dppo": "tab:red", "clip": "tab:pink", "final": "tab:orange", "gauss": "tab:gray"}
LABELS = {"dppo": "DPPO (as published)", "clip": "clip 0.2 ablation"}


def _band(ax, curves: pa.Table, label: str, color: str, **where: object) -> None:
    """Mean over seeds of a per-iteration quantity with a min-max band (``where`` selects the rows)."""
    rows = [r for r in curves.to_pylist() if all(r[k] == v for k, v in where.items() if k != "y")]
    seeds, steps = sorted({r["seed"] for r in rows}), sorted({r["env_steps"] for r in rows})
    y = np.array([[r[where["y"]] for r in sorted(rows, key=lambda r: r["env_steps"]) if r["seed"] == s]
                  for s in seeds])
    ax.plot(steps, y.mean(0), color=color, label=label)
    ax.fill_between(steps, y.min(0), y.max(0), color=color, alpha=0.2)
    ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 0))


def plot_returns(curves: pa.Table, envs: tuple[str, ...]) -> Figure:
    """Training return vs environment steps per simulator: TruDi and Gaussian PPO, mean and min-max over seeds."""
    fig, axes = new_figure(4.0 * len(envs), 3.2, ncols=len(envs))
    for ax, env in zip(axes, envs):
        for m in ("trudi", "gauss"):
            _band(ax, curves, m, COLORS[m], env=env, method=m, setting="main", y="return")
        ax.set(title=env, xlabel="environment steps", ylabel="episode return")
        ax.legend(fontsize=8)
    return fig


def plot_kl(curves: pa.Table, env: str, lrs: tuple[float, float]) -> Figure:
    """KL(old || new) per update on the stress simulator at the base and the large learning rate (log scale) of TruDi,
    DPPO, the final-step trust region and the clip ablation, with TruDi's trust-region bound epsilon dashed (at the
    base rate the matched one, Gaussian PPO's KL)."""
    fig, axes = new_figure(9.0, 3.4, ncols=2)
    for ax, lr, settings in zip(axes, lrs, (("main", "base"), ("stress",))):
        for m in ("trudi", "dppo", "final", "clip"):
            setting = settings[0] if m == "trudi" or len(settings) == 1 else settings[1]
            _band(ax, curves, LABELS.get(m, m), COLORS[m], env=env, method=m, setting=setting, y="kl")
        epsilon = next(r["epsilon"] for r in curves.to_pylist()
                       if (r["env"], r["method"], r["setting"]) == (env, "trudi", settings[0]))
        ax.axhline(epsilon, color="k", ls="--", lw=1, label=f"TruDi's epsilon {epsilon:.3g}")
        ax.set(title=f"{env}, lr = {lr:g}", xlabel="environment steps", ylabel="per-update KL", yscale="log")
        ax.legend(fontsize=8)
    return fig


def plot_detour_actions(actions: dict[str, np.ndarray]) -> Figure:
    """First actions from the symmetric detour start: histogram of the lateral component and the 2-D scatter."""
    fig, (ax, ax2) = new_figure(9.0, 3.4, ncols=2)
    for m, a in actions.items():
        ax.hist(a[:, 0], bins=40, range=(-1, 1), alpha=0.5, color=COLORS[m], label=m, density=True)
        ax2.scatter(a[:, 0], a[:, 1], s=3, alpha=0.3, color=COLORS[m], label=m)
    ax.set(xlabel="lateral action a_x (left < 0 < right)", ylabel="density", title="first action, symmetric start")
    ax2.set(xlabel="a_x", ylabel="a_y", xlim=(-1.05, 1.05), ylim=(-1.05, 1.05))
    ax.legend(fontsize=8)
    return fig


def plot_epsilon_sweep(sweep: dict) -> Figure:
    """TruDi's final return (mean and 95% CI) and mean per-update KL against the trust-region bound epsilon."""
    fig, (ax, ax2) = new_figure(9.0, 3.4, ncols=2)
    eps, ret = sweep["epsilons"], sweep["return"]
    mean = np.array([r["mean"] for r in ret])
    err = np.array([[r["mean"] - r["ci"][0] for r in ret], [r["ci"][1] - r["mean"] for r in ret]])
    ax.errorbar(eps, mean, yerr=err, marker="o", color=COLORS["trudi"], capsize=3)
    ax.set(xscale="log", xlabel="epsilon", ylabel="return (stochastic)", title=sweep["env"])
    ax2.plot(eps, [k["mean"] for k in sweep["mean_kl"]], marker="o", color=COLORS["trudi"], label="measured")
    ax2.plot(eps, eps, ls="--", color="k", lw=1, label="KL = epsilon")
    ax2.set(xscale="log", yscale="log", xlabel="epsilon", ylabel="mean per-update KL")
    ax2.legend(fontsize=8)
    return fig
