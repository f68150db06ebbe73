"""The three figures of the evaluate stage, one function each, on matplotlib's object API (no pyplot state)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from matplotlib.axes import Axes
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure

from paperdag.common.stats import Interval
from paperdag.io import new_figure


def _collapse(ax: Axes, x: np.ndarray, y: np.ndarray, d: np.ndarray, xlabel: str, ylabel: str, title: str) -> None:
    """Cell aggregates against the predicted scale, coloured by d, with the reference slope 1 through their centre."""
    for dv in np.unique(d):
        sel = d == dv
        ax.loglog(x[sel], y[sel], "o", ms=4, label=f"d={dv:g}")
    ref = np.geomspace(x.min(), x.max(), 2)
    c = np.exp(np.mean(np.log(y) - np.log(x)))
    ax.loglog(ref, c * ref, "k--", lw=1, label="slope 1 (paper)")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)


def plot_scaling(m: dict[str, np.ndarray], ns: dict[str, Interval], gap: dict[str, Interval]) -> Figure:
    """Left: ||theta_T - theta_NS|| vs k d / n^2. Right: ||theta_NS - theta_IF|| vs (k + d) sqrt(k d) / n^2."""
    n, d, k = (m[c].astype(float) for c in ("n", "d", "k"))
    fig, axes = new_figure(11, 4.5, ncols=2)
    exps = ", ".join(f"{t} {ns[t].mean:.2f}" for t in ("k", "d", "n"))
    _collapse(axes[0], k * d / n**2, m["err_ns"], d, "k d / n^2", "mean ||theta_T - theta_NS|| per cell",
              f"NS error; fitted exponents {exps} (paper 1, 1, -2)")
    _collapse(axes[1], (k + d) * np.sqrt(k * d) / n**2, m["gap"], d, "(k + d) sqrt(k d) / n^2",
              "mean ||theta_NS - theta_IF|| per cell",
              f"IF-NS gap; exponents {gap['kd'].mean:.2f} in (k+d)sqrt(kd), "
              f"{gap['n'].mean:.2f} in n (paper 1, -2)")
    return fig


def plot_ratio_heatmap(m: dict[str, np.ndarray], n_value: int) -> Figure:
    """err_IF / err_NS (cell aggregates) over the (k, d) grid at n = n_value, annotated with (k + d)/sqrt(k d)."""
    sel = m["n"] == n_value
    ks, ds = np.unique(m["k"][sel]), np.unique(m["d"][sel])
    grid = np.full((len(ds), len(ks)), np.nan)
    for k, d, r in zip(m["k"][sel], m["d"][sel], m["ratio"][sel], strict=True):
        grid[np.searchsorted(ds, d), np.searchsorted(ks, k)] = r
    fig, ax = new_figure(max(6.0, 1.0 + 0.75 * len(ks)), max(3.0, 1.2 + 0.6 * len(ds)))
    im = ax.imshow(grid, origin="lower", cmap="viridis", norm=LogNorm(), aspect="auto")
    for i, d in enumerate(ds):
        for j, k in enumerate(ks):
            ax.text(j, i, f"{grid[i, j]:.1f}\n({(k + d) / np.sqrt(k * d):.1f})", ha="center", va="center",
                    fontsize=6, color="k" if grid[i, j] > np.nanmedian(grid) else "w")
    ax.set_xticks(range(len(ks)), [str(k) for k in ks])
    ax.set_yticks(range(len(ds)), [str(d) for d in ds])
    ax.set_xlabel("k (removed points)")
    ax.set_ylabel("d")
    ax.set_title(f"mean err_IF / mean err_NS at n={n_value} (in brackets: (k+d)/sqrt(kd))", fontsize=9)
    fig.colorbar(im, ax=ax)
    return fig


def plot_group_effects(group: pa.Table, slopes: dict[tuple[str, str], Interval], n: int, d: int) -> Figure:
    """Predicted vs actual change of the mean test loss, random and coherent groups, IF and NS."""
    fig, axes = new_figure(11, 4.5, ncols=2)
    for ax, kind in zip(axes, ("random", "coherent"), strict=True):
        g = group.filter(pc.equal(group["kind"], kind))
        actual = g["actual"].to_numpy()
        for method, marker in (("if", "x"), ("ns", "o")):
            c = slopes[kind, method]
            ax.plot(actual, g[f"pred_{method}"].to_numpy(), marker, ms=3, mfc="none",
                    label=f"{method.upper()}: slope {c.mean:.3f} [{c.lo:.3f}, {c.hi:.3f}]")
        lim = np.array([actual.min(), actual.max()])
        ax.plot(lim, lim, "k--", lw=1, label="predicted = actual")
        ax.set_xlabel("actual change of test loss (exact refit)")
        ax.set_ylabel("predicted change")
        ax.set_title(f"{kind} groups (n={n}, d={d})", fontsize=9)
        ax.legend(fontsize=7)
    return fig
