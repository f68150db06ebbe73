"""Stage ``evaluate``: equal-memory comparison over seeds, span(U) energy, the memory scaling fit, claims and plots."""

from __future__ import annotations

import numpy as np

from paperdag.claims import write_metrics
from paperdag.common.stats import mean_ci
from paperdag.io import read_table, save_figure
from paperdag.stage import StageContext

from .claims import Grid, Headline, claims
from .compare import COMPARE_FILE
from .distill_grid import SEARCH_FILE
from .params import Params
from .plots import plot_error_vs_memory, plot_memory_scaling
from .reference import REFERENCES_FILE
from .stats import power_fit

METHODS = ("distilled", "no_phase1_match", "random_subset")


def _exponent(x: list[float], y: list[float]) -> float:
    """Log-log exponent of y on x (nan when x takes fewer than two values or fewer than 3 points)."""
    return power_fit(x, y).slope.mean if len(set(x)) > 1 and len(x) >= 3 else float("nan")


def _by_seed(rows: list[dict], column: str) -> np.ndarray:
    """``column`` of the rows in seed order."""
    return np.array([r[column] for r in sorted(rows, key=lambda r: r["seed"])], float)


def _headroom(refs: list[dict], cells: list[dict]) -> tuple[float, str]:
    """The smallest e_random_features - e_ref over the grid cells and the cell (seed, d, r, L) where it occurs."""
    grid = {(r["seed"], r["d"], r["r"], r["width"]) for r in cells}
    gaps = {k: r["e_random_features"] - r["e_ref"] for r in refs
            if (k := (r["seed"], r["d"], r["r"], r["width"])) in grid}
    worst = min(gaps, key=gaps.__getitem__)
    return gaps[worst], "seed {} d {} r {} L {}".format(*worst)


def evaluate(ctx: StageContext[Params], shards: int) -> dict[str, float]:
    """metrics.json (claims and headline numbers), error_vs_memory.png, memory_scaling.png."""
    p, c = ctx.params, ctx.params.compare
    refs = read_table(ctx.input("reference", REFERENCES_FILE)).to_pylist()
    runs = read_table(ctx.input("compare", COMPARE_FILE)).to_pylist()
    search = [row for i in range(shards) for row in read_table(ctx.input(f"distill_{i}", SEARCH_FILE)).to_pylist()]
    cref = [r for r in refs if (r["d"], r["r"], r["width"]) == (c.d, c.r, c.width) and r["seed"] - p.seed < c.seeds]
    e_ref, e_rf = mean_ci([r["e_ref"] for r in cref]), mean_ci([r["e_random_features"] for r in cref])
    curves = {m: [mean_ci([r[m] for r in runs if r["budget"] == b]) for b in c.budgets] for m in METHODS}
    at = c.budgets.index(c.headline)
    reached = [r for r in search if r["memory"] is not None]
    x_grid = [r["r"] ** 2 * r["d"] + r["width"] for r in reached]
    fit = power_fit(x_grid, [r["memory"] for r in reached]) if len(reached) >= 3 else None
    energy = {"min_distilled": min(r["energy_phase1"] for r in search),
              "mean_distilled": float(np.mean([r["energy_phase1"] for r in search])),
              "mean_random_r_over_d": float(np.mean([r["r"] / r["d"] for r in search])),
              "mean_max_principal_angle_deg": float(np.degrees(np.nanmean(
                  [np.nan if r["max_angle_phase1"] is None else r["max_angle_phase1"] for r in search])))}
    # the exponent if M1* and M2* were the same in every cell (memory = const x (d + 1)): bookkeeping alone
    bookkeeping = power_fit(x_grid, [r["d"] + 1 for r in reached]).slope.mean if fit else None
    least, where = _headroom(refs, search)
    headline = Headline({m: _by_seed([r for r in runs if r["budget"] == c.headline], m) for m in METHODS},
                        _by_seed(cref, "e_ref"), _by_seed(cref, "e_random_features"),
                        (c.headline, c.headline * (c.d + 1)), {m: curves[m][-1] for m in METHODS}, c.budgets[-1])
    grid = Grid(fit, bookkeeping, len(reached), len(search), least, where, energy,
                min(r["energy_w1"] for r in refs))
    verdicts = claims(headline, grid, p.claims)
    save_figure(plot_error_vs_memory([b * (c.d + 1) for b in c.budgets], curves, e_ref.mean, e_rf.mean,
                                     f"d={c.d}, r={c.r}, L={c.width}; {c.seeds} seeds, M1 = M2 = M/2"),
                ctx.output("error_vs_memory.png"))
    save_figure(plot_memory_scaling(reached, fit), ctx.output("memory_scaling.png"))
    metrics = {"reference_error_max": max(r["e_ref"] for r in refs),
               "random_features_error_min": min(r["e_random_features"] for r in refs),
               "reference_w1_energy_min": min(r["energy_w1"] for r in refs),
               "memory_exponent": fit.slope.mean if fit else float("nan"),
               "bookkeeping_exponent": bookkeeping if bookkeeping is not None else float("nan"),
               "least_headroom_grid": least,
               "memory_fit_r2": fit.r2 if fit else float("nan"),
               "cells_reached": len(reached), "cells": len(search),
               "phase1_memory_exponent_r2d": _exponent([r["r"] ** 2 * r["d"] for r in reached],
                                                       [r["m1"] * (r["d"] + 1) for r in reached]),
               "memory_exponent_d": _exponent([r["d"] for r in reached], [r["memory"] for r in reached]),
               "phase1_points_exponent_r": _exponent([r["r"] for r in reached], [r["m1"] for r in reached]),
               "phase2_memory_exponent_L": _exponent([r["width"] for r in reached],
                                                     [r["m2"] * (r["d"] + 1) for r in reached]),
               **{f"headline_{m}_error": curves[m][at].mean for m in METHODS},
               "headline_full_data_error": e_ref.mean,
               **{f"energy_{k}": v for k, v in energy.items()}}
    metrics = {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in metrics.items()}
    write_metrics(ctx.out, {k: v for k, v in metrics.items() if v is not None}, verdicts)
    return {k: float(v) for k, v in metrics.items() if v is not None}
