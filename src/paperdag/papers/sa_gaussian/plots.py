"""Figures, one function each, on matplotlib's object API (``paperdag.io.new_figure``; no pyplot state)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter
from scipy.stats import norm

from paperdag.io import new_figure

from .rates import Rate

STYLE = {"gaussian": ("tab:blue", "o", "W1 to N(0, Sigma)"), "marginal": ("tab:red", "s", "W1 to N(0, Sigma_0) "
         "(one-step covariance, baseline)"), "gibbs": ("tab:green", "o", "W1 to Gibbs exp(-y^4/2sigma^2)"),
         "best_gaussian": ("tab:red", "s", "W1 to best-fitting Gaussian")}


def plot_w1(rows: dict[str, dict[str, dict[str, np.ndarray]]], rates: dict[str, Rate]) -> Figure:
    """Per setting, log-log W1 vs alpha (bootstrap +-1.96 sd bars), the MC floor, the fitted alpha^(1/2) log(1/alpha)
    envelope and reference slopes 1/2 and 1 through the smallest-alpha point."""
    names = list(rows)
    ncols = 4
    fig, axes = new_figure(15, 3.4 * int(np.ceil(len(names) / ncols)), ncols=ncols,
                           nrows=int(np.ceil(len(names) / ncols)))
    for ax, s in zip(np.ravel(axes), names, strict=False):
        for target, r in rows[s].items():
            color, marker, label = STYLE[target]
            ax.errorbar(r["alpha"], r["w1"], yerr=1.96 * r["boot"].std(1, ddof=1), color=color, marker=marker,
                        ms=4, lw=1, capsize=2, label=label)
            ax.plot(r["alpha"], r["floor"], color=color, ls=":", lw=1,
                    label="MC floor" if target in ("gaussian", "gibbs") else None)
            if np.isfinite(r["envelope"]).all():
                ax.plot(r["alpha"], r["envelope"], "k--", lw=1, label="C alpha^1/2 log(1/alpha)")
        main = rows[s]["gibbs" if "gibbs" in rows[s] else "gaussian"]
        for slope, ls in ((0.5, (0, (1, 3))), (1.0, (0, (5, 5)))):
            ax.plot(main["alpha"], main["w1"][-1] * (main["alpha"] / main["alpha"][-1]) ** slope, color="gray", ls=ls,
                    lw=0.8, label=f"slope {slope:g}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        r = rates[s]
        fit = (f"fitted slope {r.estimate:.2f} [{r.lo:.2f}, {r.hi:.2f}] on {r.points} stepsizes" if r.points >= 3 else
               f"no slope: W1 near the MC floor at {len(main['alpha']) - r.points} of {len(main['alpha'])} stepsizes")
        ax.set_title(f"{s}\n{fit}", fontsize=9)
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("stepsize alpha")
        ax.legend(fontsize=6)
    for ax in np.ravel(axes)[len(names):]:
        ax.set_visible(False)
    np.ravel(axes)[0].set_ylabel("W1 (sliced in 2-D)")
    return fig


def plot_tails(tails: dict[str, pa.Table]) -> Figure:
    """Per setting, empirical P(r > t) (markers, one colour per alpha, +-2 se) against the Gaussian limit (line)."""
    names = list(tails)
    ncols = 4
    nrows = int(np.ceil(len(names) / ncols))
    fig, axes = new_figure(15, 3.3 * nrows, ncols=ncols, nrows=nrows)
    for ax, s in zip(np.ravel(axes), names, strict=False):
        t = tails[s]
        alphas = sorted(set(t["alpha"].to_pylist()), reverse=True)
        colors = [f"C{i}" for i in range(len(alphas))]
        for a, c in zip(alphas, colors, strict=True):
            sel = np.asarray(t["alpha"].to_numpy() == a)
            ax.errorbar(t["t"].to_numpy()[sel], t["empirical"].to_numpy()[sel], yerr=2 * t["se"].to_numpy()[sel],
                        color=c, marker="o", ms=3, lw=0, elinewidth=1, label=f"alpha={a:g}")
        sel = np.asarray(t["alpha"].to_numpy() == alphas[0])
        ax.plot(t["t"].to_numpy()[sel], t["gaussian"].to_numpy()[sel], "k-", lw=1, label="Gaussian limit")
        ax.set_yscale("log")
        ax.set_title(s, fontsize=9)
        ax.set_xlabel("t (Mahalanobis radius r > t)")
        ax.legend(fontsize=6)
    for ax in np.ravel(axes)[len(names):]:
        ax.set_visible(False)
    np.ravel(axes)[0].set_ylabel("P(r > t)")
    return fig


def plot_quartic(y: np.ndarray, alpha: float, sigma: float, scale: float, gibbs: dict[str, np.ndarray],
                 best: dict[str, np.ndarray]) -> Figure:
    """Left: histogram of y = x / alpha^(1/4) at the smallest alpha against the Gibbs density
    exp(-y^4 / (2 sigma^2)) / Z and the best-fitting Gaussian. Right: both W1 vs alpha with the MC floor."""
    fig, (ax, ax2) = new_figure(11, 4, ncols=2)
    grid = np.linspace(-3.5 * y.std(), 3.5 * y.std(), 400)
    gibbs_pdf = np.exp(-grid**4 / (2 * sigma**2))
    ax.hist(y, bins=120, range=(grid[0], grid[-1]), density=True, color="lightgray",
            label=f"steady state, alpha={alpha:g}")
    ax.plot(grid, gibbs_pdf / np.trapezoid(gibbs_pdf, grid), color="tab:green", label="Gibbs exp(-y^4 / 2 sigma^2)")
    ax.plot(grid, norm.pdf(grid, scale=scale), color="tab:red", ls="--", label=f"best Gaussian, s={scale:.3f}")
    ax.set_xlabel("y = x / alpha^(1/4)")
    ax.set_ylabel("density")
    ax.legend(fontsize=7)
    for target, r in (("gibbs", gibbs), ("best_gaussian", best)):
        color, marker, label = STYLE[target]
        ax2.errorbar(r["alpha"], r["w1"], yerr=1.96 * r["boot"].std(1, ddof=1), color=color, marker=marker, ms=4,
                     capsize=2, label=label)
    ax2.plot(gibbs["alpha"], gibbs["floor"], color="gray", ls=":", label="MC floor")
    ax2.set_xscale("log")
    ax2.xaxis.set_minor_formatter(NullFormatter())
    ax2.set_yscale("log")
    ax2.set_xlabel("stepsize alpha")
    ax2.set_ylabel("W1")
    ax2.legend(fontsize=7)
    return fig
