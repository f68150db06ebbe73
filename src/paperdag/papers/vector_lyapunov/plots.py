"""Figures, one function each, on matplotlib's object API (``paperdag.io.new_figure``; no pyplot state)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from paperdag.io import new_figure

from .networks.evaluation import LevelSet
from .platoon.evaluation import PlatoonResults


def verification_scaling(platoon: PlatoonResults, networks: dict[str, dict[str, list]],
                         monolithic: dict[str, list[dict]]) -> Figure:
    """Left: deterministic verification work (cells + MILP nodes) against N, log-log, of the network systems' and
    the platoon's vector certificates (budget-bound on the platoon). Right: seconds to the verdict of the monolithic
    baselines (the learned one and the compositional certificate's max_i V_i as one ring-wide query, to their first
    undecided cell) and of the compositional certificate on the same rings (open markers: not
    proved)."""
    fig, ax = new_figure(9, 3.5, ncols=2)
    scal, full = platoon.reach, platoon.full
    for system, sc in networks.items():
        ok = "verified" if all(sc["verified"]) else "not verified"
        ax[0].plot(sc["n"], sc["bounds"], "D-", label=f"{system}, vector + reach ({ok})")
    ax[0].plot(scal["n"], scal["bounds"], "o-", color="C2", label="platoon, vector + reach (budget spent)")
    ax[0].plot(full["n"], full["bounds"], "s--", color="C3", label="platoon, vector, full delay domain")
    for k, (system, rows) in enumerate(monolithic.items()):
        ns = [r["n"] for r in rows]
        for key, style, name in (("comp", "-", "compositional"),
                                 ("mono", ":", "learned monolithic, to its first undecided cell"),
                                 ("ring", "--", "max_i V_i ring-wide, to its first undecided cell")):
            if any(key not in r for r in rows):
                continue
            seconds = [r[key]["seconds"] for r in rows]
            ax[1].plot(ns, seconds, style, color=f"C{k}", label=f"{system}, {name}")
            for n, sec, r in zip(ns, seconds, rows):
                ax[1].plot(n, sec, "o", color=f"C{k}", mfc=f"C{k}" if r[key]["verified"] else "none")
    for a, label in zip(ax, ("cells + MILP nodes", "seconds to the verdict")):
        a.set_xscale("log", base=2)
        a.set_yscale("log")
        a.set_xlabel("N")
        a.set_ylabel(label)
        a.legend(fontsize=7)
    ax[1].set_title("monolithic vs compositional, same budget (filled: proved)", fontsize=8)
    return fig


def control_performance(control: dict[str, dict[str, float]], networks: dict[str, dict[str, dict]]) -> Figure:
    """Left: per platoon controller (its ladder, then the certified one), the RMS spacing error and the
    string-stability ratio relative to the nominal controller's (dashed: the nominal controller). Right: per network
    system, the held-out closed-loop cost J of each controller of the control study (and of the LQR bound) relative
    to the nominal controller's."""
    fig, ax = new_figure(9, 3.5, ncols=2)
    names = list(control)
    x = np.arange(len(names))
    for shift, measure, label in ((-0.2, "rms_spacing", "RMS spacing error"), (0.2, "string_ratio", "string ratio")):
        ax[0].bar(x + shift, [control[k][measure] / control["nominal"][measure] for k in names], 0.4,
                  label=f"{label} / nominal's")
    ax[0].set_xticks(x, names)
    ax[0].axhline(1.0, color="0.5", lw=0.8, ls="--")
    ax[0].set_ylabel("relative to the nominal controller")
    ax[0].set_title(f"platoon (nominal: RMS {control['nominal']['rms_spacing']:.3g} m, string ratio "
                    f"{control['nominal']['string_ratio']:.3g})", fontsize=8)
    controllers = ("nominal", "uncertified", "certified", "lqr")
    x = np.arange(len(networks))
    for k, name in enumerate(controllers):
        J = [c[name]["J"] / c["nominal"]["J"] if name in c else np.nan for c in networks.values()]
        ax[1].bar(x + (k - 1.5) * 0.2, J, 0.2, label="LQR bound" if name == "lqr" else name)
    ax[1].set_xticks(x, list(networks))
    ax[1].set_ylabel("cost J / nominal J")
    ax[1].set_title("networks: J per controller; LQR of the delay-augmented ring", fontsize=8)
    for a in ax:  # room above the bars for the legend
        a.set_ylim(0, 1.3 * a.get_ylim()[1])
        a.legend(fontsize=7, ncol=3, loc="upper center")
    return fig


def network_certificates(level_sets: dict[str, LevelSet], tau: int) -> Figure:
    """Per system, the verified level set {V <= c_0} of the neural certificate (solid), the LMI quadratic
    certificate's level set (dashed) and subsystem 0's closed-loop trajectory from the neural level set's edge."""
    fig, axes = new_figure(9, 4, ncols=2)
    for ax, (system, ls) in zip(axes, level_sets.items()):
        ax.contour(ls.q, ls.v, ls.V, levels=[ls.c_0], colors="C0")
        if ls.quadratic is not None:
            ax.contour(ls.q, ls.v, ls.quadratic, levels=[ls.quadratic_c_0], colors="C1", linestyles="--")
        ax.plot(ls.trajectory[:, 0], ls.trajectory[:, 1], color="C2", lw=1)
        ax.set_title(f"{system}, tau={tau}: neural (solid), LMI (dashed), trajectory", fontsize=8)
        ax.set_xlabel("q (position / angle error)")
        ax.set_ylabel("v (velocity / frequency error)")
    return fig
