"""Stage ``evaluate``: the comparison cell (headline error against the trivial real-data baselines' ladder,
compression at equal error), span(U) energy and headroom per cell over seeds, the memory scaling fits (composite and
per phase), claims and plots."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from paperdag.claims import write_metrics
from paperdag.common.stats import Interval, mean_ci
from paperdag.io import read_table, save_figure
from paperdag.stage import StageContext

from .baselines import first_reaching
from .claims import Compression, Grid, Headline, claims
from .compare import COMPARE_FILE
from .distill_grid import SEARCH_FILE
from .params import Params
from .plots import plot_error_vs_memory, plot_memory_scaling
from .reference import REFERENCES_FILE
from .stats import loglinear_fit, power_fit

RUNGS = {"random_subset": "random real subset (ridge lam on validation)",
         "random_phase1": "random real phase-1 points (real phase 2)"}


def _cell(d: int, r: int, L: int) -> str:
    return f"d {d} r {r} L {L}"


def _per_cell(rows: list[dict], value: Callable[[dict], float]) -> dict[str, Interval]:
    """Per (d, r, L) cell of ``rows``, the t-interval over its seeds of ``value(row)``."""
    cells: dict[str, list[float]] = {}
    for row in rows:
        cells.setdefault(_cell(row["d"], row["r"], row["width"]), []).append(value(row))
    return {k: mean_ci(v, unit="seed") for k, v in cells.items()}


def _compression(runs: list[dict], curve: str, distilled: list[int | None], target: str, slack: float) -> Compression:
    """A baseline's points-to-target per seed (first size with error <= e_ref + slack) against ``distilled``."""
    return Compression([first_reaching(r["sizes"], r[curve], r["e_ref"] + slack) for r in runs], distilled, target,
                       runs[0]["sizes"][-1], np.array([r[curve][-1] for r in runs]),
                       np.array([r["e_ref"] + slack for r in runs]))


def _per_phase(reached: list[dict]) -> tuple[Interval, Interval]:
    """Exponent of r for M1* and of L for M2* (d + 1), each from a log-linear fit on log r, log d, log L."""
    factors = {k: np.array([r[c] for r in reached], float) for k, c in (("r", "r"), ("d", "d"), ("L", "width"))}
    m1 = loglinear_fit(np.array([r["m1"] for r in reached], float), factors)
    m2 = loglinear_fit(np.array([r["m2"] * (r["d"] + 1) for r in reached], float), factors)
    return m1.exponents["r"], m2.exponents["L"]


def evaluate(ctx: StageContext[Params], shards: int) -> dict[str, float]:
    """metrics.json (claims and headline numbers), error_vs_memory.png, memory_scaling.png."""
    p, c = ctx.params, ctx.params.compare
    refs = read_table(ctx.input("reference", REFERENCES_FILE)).to_pylist()
    runs = sorted(read_table(ctx.input("compare", COMPARE_FILE)).to_pylist(), key=lambda r: r["seed"])
    search = [row for i in range(shards) for row in read_table(ctx.input(f"distill_{i}", SEARCH_FILE)).to_pylist()]
    rf = {r["seed"]: r["e_random_features"] for r in refs if (r["d"], r["r"], r["width"]) == (c.d, c.r, c.width)}
    at = c.budgets.index(c.headline)
    e_ref = np.array([r["e_ref"] for r in runs])
    size = next(i for i, m in enumerate(c.sizes) if m >= c.headline)  # the rungs at >= the headline's points
    headline = Headline(np.array([r["distilled"][at] for r in runs]), e_ref, np.array([rf[r["seed"]] for r in runs]),
                        (c.headline, c.headline * (c.d + 1)),
                        {name: np.array([r[k][size] for r in runs]) for k, name in RUNGS.items()}, c.sizes[size])
    tol = p.claims.tol
    whole = [None if r["m2"] is None else r["m1"] + r["m2"] for r in runs]
    rs = _compression(runs, "random_subset", whole, f"e_ref + {tol:g}", tol)
    p1 = _compression(runs, "random_phase1", [r["m1"] for r in runs], f"e_ref + {tol / 2:g} (phase 1 alone)",
                      tol / 2)
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
    phase1_r, phase2_L = _per_phase(reached)
    runs_of_grid = {(r["seed"], r["d"], r["r"], r["width"]) for r in search}
    grid_refs = [r for r in refs if (r["seed"], r["d"], r["r"], r["width"]) in runs_of_grid]
    headroom = _per_cell(grid_refs, lambda r: r["e_random_features"] - r["e_ref"])
    grid = Grid(fit, bookkeeping, phase1_r, phase2_L, len(reached), len(search), headroom,
                _per_cell(search, lambda r: r["energy_phase1"]), _per_cell(refs, lambda r: r["energy_w1"]),
                _cell(c.d, c.r, c.width), energy)
    verdicts = claims(headline, rs, p1, grid, p.claims, p.plans)
    save_figure(plot_error_vs_memory(runs, e_ref.mean(), float(np.mean(headline.e_rf)), tol,
                                     f"d={c.d}, r={c.r}, L={c.width}; {c.seeds} seeds; distilled M1 = M2 = M/2"),
                ctx.output("error_vs_memory.png"))
    save_figure(plot_memory_scaling(reached, fit), ctx.output("memory_scaling.png"))
    metrics = {"reference_error_max": max(r["e_ref"] for r in refs),
               "random_features_error_min": min(r["e_random_features"] for r in refs),
               "reference_w1_energy_min": min(r["energy_w1"] for r in refs),
               "memory_exponent": fit.slope.mean if fit else float("nan"),
               "bookkeeping_exponent": bookkeeping if bookkeeping is not None else float("nan"),
               "least_headroom_grid": min(r["e_random_features"] - r["e_ref"] for r in grid_refs),
               "memory_fit_r2": fit.r2 if fit else float("nan"),
               "cells_reached": len(reached), "cells": len(search),
               "phase1_points_exponent_r": phase1_r.mean, "phase2_memory_exponent_L": phase2_L.mean,
               "headline_distilled_error": float(np.mean(headline.distilled)),
               "headline_full_data_error": float(e_ref.mean()),
               "compression_random_subset": rs.ratio().mean, "compression_random_phase1": p1.ratio().mean,
               **{f"energy_{k}": v for k, v in energy.items()}}
    metrics = {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in metrics.items()}
    write_metrics(ctx.out, {k: v for k, v in metrics.items() if v is not None}, verdicts)
    return {k: float(v) for k, v in metrics.items() if v is not None}
