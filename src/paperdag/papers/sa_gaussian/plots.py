"""Figures, one function each, on matplotlib's object API (``paperdag.io.new_figure``; no pyplot state)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter
from scipy.stats import norm

from paperdag.io import new_figure

from .claims import Bounded, Measured

STYLE = {"gaussian": ("tab:blue", "o", "W1 to N(0, Sigma)"), "marginal": ("tab:red", "s", "W1 to N(0, Sigma_0) "
         "(one-step covariance, baseline)"), "gibbs": ("tab:green", "o", "W1 to Gibbs exp(-y^4/2sigma^2)"),
         "best_gaussian": ("tab:red", "s", "W1 to best-fitting Gaussian")}


def _grid(n: int, ncols: int = 4, height: float = 3.4) -> tuple[Figure, list]:
    nrows = int(np.ceil(n / ncols))
    fig, axes = new_figure(15, height * nrows, ncols=ncols, nrows=nrows)
    axes = list(np.ravel(axes))
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes


def _loglog(ax, xlabel: str = "stepsize alpha") -> None:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(xlabel)
    ax.legend(fontsize=6)


def _title(s: str, m: Measured) -> str:
    t = m.two_term.get(s)
    if t is not None:
        cross = f", crossover {t.crossover:.2g}" if np.isfinite(t.crossover) else ""
        return (f"{s}\nc_h = {t.c_half.mean:.3f} [{t.c_half.lo:.3f}, {t.c_half.hi:.3f}] on {t.points} "
                f"stepsizes{cross}")
    r = m.local.get(s) or m.rates[s]
    if r.n < 3:
        return f"{s}\nno slope: W1 above floor_ratio x the MC floor at only {r.n} stepsizes"
    return f"{s}\nslope {r.mean:.2f} [{r.lo:.2f}, {r.hi:.2f}] on {r.n} stepsizes"


def plot_w1(rows: dict[str, dict[str, dict[str, np.ndarray]]], m: Measured, exact: dict[str, pa.Table]) -> Figure:
    """Per setting, log-log W1 vs alpha (bootstrap +-1.96 sd bars; sliced in 2-D) with the MC floor, the two-term
    model c_h alpha^(1/2) + c_1 alpha (its window solid), in 2-D the exact W1 of the groups (t-interval bars) and its
    floor, and reference slopes 1/2 and 1 through the smallest-alpha point."""
    fig, axes = _grid(len(rows))
    for ax, s in zip(axes, rows, strict=False):
        for target, r in rows[s].items():
            color, marker, label = STYLE[target]
            ax.errorbar(r["alpha"], r["w1"], yerr=1.96 * r["boot"].std(1, ddof=1), color=color, marker=marker,
                        ms=4, lw=1, capsize=2, label=label)
            ax.plot(r["alpha"], r["floor"], color=color, ls=":", lw=1,
                    label="MC floor" if target in ("gaussian", "gibbs") else None)
        main = rows[s]["gibbs" if "gibbs" in rows[s] else "gaussian"]
        if (t := m.two_term.get(s)) is not None:
            ax.plot(main["alpha"], t(main["alpha"]), color="k", lw=0.8, ls="--", label="c_h a^1/2 + c_1 a")
            ax.plot(np.array(t.alphas), t(np.array(t.alphas)), color="k", lw=1.5)
        if s in exact:
            e = exact[s]
            w = e["w1"].to_numpy()
            ax.errorbar(e["alpha"].to_numpy(), w, yerr=[w - e["w1_lo"].to_numpy(), e["w1_hi"].to_numpy() - w],
                        color="tab:purple", marker="^", ms=4, lw=1, capsize=2,
                        label=f"exact W1, groups of {e['subsample'][0].as_py()}")
            ax.plot(e["alpha"].to_numpy(), e["floor"].to_numpy(), color="tab:purple", ls=":", lw=1,
                    label="its floor")
        for slope, ls in ((0.5, (0, (1, 3))), (1.0, (0, (5, 5)))):
            ax.plot(main["alpha"], main["w1"][-1] * (main["alpha"] / main["alpha"][-1]) ** slope, color="gray", ls=ls,
                    lw=0.8, label=f"slope {slope:g}")
        ax.set_title(_title(s, m), fontsize=8)
        _loglog(ax)
    axes[0].set_ylabel("W1 (sliced in 2-D)")
    return fig


def plot_bound(bounds: dict[str, list[Bounded]]) -> Figure:
    """Per i.i.d.-noise setting, log-log: the explicit bound T1 + T2 + T3, the trivial coupling bound and the
    measured W1 (95% CI bars; the exact W1 of the groups in 2-D); the bound has content where it is below the
    trivial."""
    fig, axes = _grid(len(bounds), ncols=3, height=3.3)
    for ax, (s, rows) in zip(axes, bounds.items(), strict=False):
        a = np.array([b.alpha for b in rows])
        w = np.array([b.w1.mean for b in rows])
        ax.errorbar(a, w, yerr=[w - [b.w1.lo for b in rows], [b.w1.hi for b in rows] - w], color="tab:blue",
                    marker="o", ms=4, capsize=2,
                    label="measured W1" if s.startswith("sgd") else "exact W1 of the groups (upper-biased)")
        ax.plot(a, [b.bound for b in rows], "k-", marker="s", ms=3, label="explicit bound T1 + T2 + T3")
        ax.plot(a, [b.trivial for b in rows], color="tab:red", ls="--", label="trivial (E|y|^2 + tr Sigma)^1/2")
        ax.set_title(s, fontsize=9)
        _loglog(ax)
    axes[0].set_ylabel("W1")
    return fig


def plot_tails(tails: dict[str, pa.Table]) -> Figure:
    """Per setting, empirical P(r > t) (markers, one colour per alpha, +-2 se) against the Gaussian limit (line)."""
    fig, axes = _grid(len(tails), height=3.3)
    for ax, s in zip(axes, tails, strict=False):
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
    axes[0].set_ylabel("P(r > t)")
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
