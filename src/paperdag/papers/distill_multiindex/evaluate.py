"""Stage ``evaluate``: the comparison cell (headline error against the trivial real-data baselines' ladder,
compression at equal error), span(U) energy and headroom per cell over seeds, the memory scaling fits (composite and
per phase, at the target that judges the laws, the other target's reported), claims and plots."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from paperdag.claims import write_metrics
from paperdag.common.stats import Interval, mean_ci
from paperdag.io import read_table, save_figure
from paperdag.stage import StageContext

from .baselines import first_reaching
from .claims import Compression, Grid, Headline, claims, fits_summary
from .compare import COMPARE_FILE
from .design import target_name
from .distill_grid import SEARCH_FILE
from .params import Params
from .plots import plot_error_vs_memory, plot_memory_scaling
from .reference import REFERENCES_FILE
from .stats import scaling_fits

RUNGS = {"random_subset": "random real subset (ridge lam on validation)",
         "random_phase1": "random real phase-1 points (real phase 2)",
         "kcenter": "k-center coreset of real points (ridge lam on validation)"}


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


def _at(row: dict, target: str) -> dict:
    """A search row with m1, m2, memory, energy and angle of one target (loose or near)."""
    return row | {k: row[f"{k}_{target}"] for k in ("m1", "m2", "memory", "energy_phase1", "max_angle_phase1")}


def evaluate(ctx: StageContext[Params], shards: int) -> dict[str, float]:
    """metrics.json (claims and headline numbers), error_vs_memory.png, memory_scaling.png."""
    p, c = ctx.params, ctx.params.compare
    refs = read_table(ctx.input("reference", REFERENCES_FILE)).to_pylist()
    runs = sorted(read_table(ctx.input("compare", COMPARE_FILE)).to_pylist(), key=lambda r: r["seed"])
    raw = [row for i in range(shards) for row in read_table(ctx.input(f"distill_{i}", SEARCH_FILE)).to_pylist()]
    rf = {r["seed"]: r["e_random_features"] for r in refs if (r["d"], r["r"], r["width"]) == (c.d, c.r, c.width)}
    at = c.budgets.index(c.headline)
    e_ref = np.array([r["e_ref"] for r in runs])
    size = next(i for i, m in enumerate(c.sizes) if m >= c.headline)  # the rungs at >= the headline's points
    headline = Headline(np.array([r["distilled"][at] for r in runs]), e_ref, np.array([rf[r["seed"]] for r in runs]),
                        (c.headline, c.headline * (c.d + 1)),
                        {name: np.array([r[k][size] if k != "kcenter" else r[k] for r in runs])
                         for k, name in RUNGS.items()}, c.sizes[size])
    if any(r["kcenter_points"] != c.sizes[size] for r in runs):
        raise RuntimeError("the k-center rung was not taken at the ladder's size")
    tol = p.claims.tol
    whole = [None if r["m2"] is None else r["m1"] + r["m2"] for r in runs]
    rs = _compression(runs, "random_subset", whole, f"e_ref + {tol:g}", tol)
    p1 = _compression(runs, "random_phase1", [r["m1"] for r in runs], f"e_ref + {tol / 2:g} (phase 1 alone)",
                      tol / 2)
    judged, other = p.claims.laws_at, next(t for t in ("loose", "near") if t != p.claims.laws_at)
    search = [_at(r, judged) for r in raw]
    reached = [r for r in search if r["memory"] is not None]
    fits = scaling_fits(reached)
    beside = scaling_fits([r for r in (_at(r, other) for r in raw) if r["memory"] is not None])
    energy = {"min_distilled": min(r["energy_phase1"] for r in search),
              "mean_distilled": float(np.mean([r["energy_phase1"] for r in search])),
              "mean_random_r_over_d": float(np.mean([r["r"] / r["d"] for r in search])),
              "mean_max_principal_angle_deg": float(np.degrees(np.nanmean(
                  [np.nan if r["max_angle_phase1"] is None else r["max_angle_phase1"] for r in search])))}
    runs_of_grid = {(r["seed"], r["d"], r["r"], r["width"]) for r in search}
    grid_refs = [r for r in refs if (r["seed"], r["d"], r["r"], r["width"]) in runs_of_grid]
    excess = {(r["seed"], r["d"], r["r"], r["width"]): r[f"excess_{judged}"] for r in raw}
    # random features' error above the judged target (e_ref + its excess), per run
    headroom = _per_cell(grid_refs, lambda r: r["e_random_features"] - r["e_ref"]
                         - excess[r["seed"], r["d"], r["r"], r["width"]])
    reported = {"target": target_name(p.claims, other), "laws_at": other,
                "runs_reached": sum(r[f"memory_{other}"] is not None for r in raw), **fits_summary(beside)}
    grid = Grid(fits, len(reached), len(search), headroom, _per_cell(search, lambda r: r["energy_phase1"]),
                _per_cell(refs, lambda r: r["energy_w1"]), _cell(c.d, c.r, c.width), energy,
                target_name(p.claims, judged), judged, reported,
                tuple(f"seed {r['seed']} d {r['d']} r {r['r']} L {r['width']} (phase {1 if r['m1'] is None else 2})"
                      for r in search if r["memory"] is None))
    fit = fits.composite
    verdicts = claims(headline, rs, p1, grid, p.claims, p.plans)
    save_figure(plot_error_vs_memory(runs, e_ref.mean(), float(np.mean(headline.e_rf)), tol,
                                     f"d={c.d}, r={c.r}, L={c.width}; {c.seeds} seeds; distilled M1 = M2 = M/2"),
                ctx.output("error_vs_memory.png"))
    save_figure(plot_memory_scaling(reached, fit, target_name(p.claims, judged)), ctx.output("memory_scaling.png"))
    metrics = {"reference_error_max": max(r["e_ref"] for r in refs),
               "random_features_error_min": min(r["e_random_features"] for r in refs),
               "reference_w1_energy_min": min(r["energy_w1"] for r in refs),
               "memory_exponent": fit.slope.mean if fit else float("nan"),
               "bookkeeping_exponent": fits.bookkeeping if fits.bookkeeping is not None else float("nan"),
               "least_headroom_grid": min(iv.mean for iv in headroom.values()),
               "memory_fit_r2": fit.r2 if fit else float("nan"),
               "cells_reached": len(reached), "cells": len(search),
               "phase1_points_exponent_r": fits.phase1_r.mean, "phase2_memory_exponent_L": fits.phase2_L.mean,
               "decades_L": fits.decades_L,
               f"memory_exponent_{other}": beside.composite.slope.mean if beside.composite else float("nan"),
               f"phase1_points_exponent_r_{other}": beside.phase1_r.mean,
               f"phase2_memory_exponent_L_{other}": beside.phase2_L.mean, f"decades_L_{other}": beside.decades_L,
               "headline_kcenter_error": float(np.mean(headline.rungs[RUNGS["kcenter"]])),
               "headline_distilled_error": float(np.mean(headline.distilled)),
               "headline_full_data_error": float(e_ref.mean()),
               "compression_random_subset": rs.ratio().mean, "compression_random_phase1": p1.ratio().mean,
               **{f"energy_{k}": v for k, v in energy.items()}}
    metrics = {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in metrics.items()}
    write_metrics(ctx.out, {k: v for k, v in metrics.items() if v is not None}, verdicts)
    return {k: float(v) for k, v in metrics.items() if v is not None}
