"""The paper's claims restated for our scale: a pure function from measured numbers to claims of three kinds.

Errors are relative test errors (MSE / Var y; the zero predictor scores 1). "Close to the full-data network" means
an excess of at most ``tol`` (a fraction of the label variance): the full-data network's own error is near 0 here,
so a ratio to it is not a usable yardstick. A method's memory is the fewest points (each d + 1 numbers) with which
it reaches that target; a baseline is compared with distillation by the ratio of these memories (compression at
equal error), so a baseline is judged where it learns, never at a budget where it sits at chance.

- preconditions (the regime): each real-data baseline learns the task somewhere on its size grid (reaches the target
  on every seed) and the distilled set reaches it on every comparison seed (both memories exist); there is headroom
  (random features, the network without its feature-learning step, trained on all the data, are more than ``tol``
  worse than the full-data network: at the comparison cell over seeds, and in every grid cell, so the target is not
  reachable without learning features); the real-data feature step puts W_1 in span(U) (the structure the distilled
  points should encode is there to encode); every grid cell reached the target (no censored cell), and the composite
  memory fit's interval lies above the exponent that counting d + 1 numbers per point alone gives on the grid (else
  the fit cannot tell the law from bookkeeping);
- evidence: the headline error at equal memory, the two compression ratios (geometric mean over seeds, t-interval of
  the log ratio), the span(U) energy of the distilled points (a count over the fixed grid, ``exact``), the composite
  memory exponent and the law per phase, M1* ~ r^2 points and M2* (d + 1) ~ L numbers (``trend`` of the exponents
  of a log-linear fit on log r, log d, log L, so the other factors of the grid are held fixed);
- no check: nothing here holds by construction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from paperdag.common.stats import Interval, mean_ci, paired_diff_ci
from paperdag.common.verdicts import (
    Claim,
    evidence,
    exact,
    noninferiority,
    precondition,
    superiority,
    trend,
)

from .params import ClaimParams
from .stats import PowerFit

NAN = Interval(float("nan"), float("nan"), float("nan"))
SUBSET = "a random subset of real data (both phases, ridge lam chosen on validation)"
PHASE1 = "the feature-learning step on random real points (second layer fitted on the real rows)"


@dataclass(frozen=True)
class Headline:
    """The comparison cell at the headline budget, one value per seed (seed order): the distilled set's error, the
    full-data network's and random features' errors; ``budget``: (points, numbers stored)."""

    distilled: np.ndarray
    e_ref: np.ndarray
    e_rf: np.ndarray
    budget: tuple[int, int]


@dataclass(frozen=True)
class Compression:
    """A real-data baseline's memory-to-target against the distilled set's, per comparison seed (points; None where
    a search ended first); ``target`` names the error to reach, ``largest`` the largest size the baseline tried and
    ``error_at_largest`` its error there over seeds."""

    baseline: list[int | None]
    distilled: list[int | None]
    target: str
    largest: int
    error_at_largest: Interval

    def ratio(self) -> Interval:
        """Geometric-mean ratio baseline / distilled over the seeds where both reached: exp of the t-interval of the
        per-seed log ratios (nan when no seed has both)."""
        logs = [math.log(b / m) for b, m in zip(self.baseline, self.distilled) if b is not None and m is not None]
        if not logs:
            return NAN
        iv = mean_ci(logs)
        return Interval(math.exp(iv.mean), math.exp(iv.lo), math.exp(iv.hi), iv.n, iv.confidence)

    def summary(self) -> dict[str, object]:
        reached = [b for b in self.baseline if b is not None]
        return {"points_to_target": self.baseline, "reached": len(reached), "seeds": len(self.baseline),
                "median_points": float(np.median(reached)) if reached else None,
                f"error_at_{self.largest}_points": _iv(self.error_at_largest)}


@dataclass(frozen=True)
class Grid:
    """The scaling grid.

    ``fit``: memory* ~ (r^2 d + L)^s over the reached cells (None if fewer than 3); ``bookkeeping``: the exponent of
    d + 1 alone on r^2 d + L over the same cells (None without a fit); ``phase1_r``: the exponent of M1* (points) on r
    and ``phase2_L`` of M2* (d + 1) (numbers) on L, each from a log-linear fit on log r, log d, log L; ``reached`` /
    ``total`` cells; ``least_headroom``: the smallest e_random_features - e_ref over the grid cells,
    ``headroom_cell`` where; ``energy``: min/mean span(U) energy of the distilled phase-1 sets and of random points;
    ``reference_energy``: the least span(U) energy of the full-data networks' W_1."""

    fit: PowerFit | None
    bookkeeping: float | None
    phase1_r: Interval
    phase2_L: Interval
    reached: int
    total: int
    least_headroom: float
    headroom_cell: str
    energy: dict[str, float]
    reference_energy: float


def _iv(x: Interval) -> dict[str, float | int | list[float | None] | None]:
    """An interval for the metrics file (nan, e.g. an exponent the grid cannot fit, as null: JSON has no nan)."""
    def r(v: float) -> float | None:
        return round(v, 4) if math.isfinite(v) else None

    return {"mean": r(x.mean), "ci95": [r(x.lo), r(x.hi)], "n": x.n}


def preconditions(h: Headline, rs: Compression, p1: Compression, g: Grid, p: ClaimParams) -> list[Claim]:
    """The regime of the comparisons and of the scaling grid (see the module)."""
    out = [precondition(
        name, f"{what} reaches {c.target} within {c.largest} points on every seed (the baseline learns somewhere)",
        "its own largest subset", c.summary(), all(b is not None for b in c.baseline),
        f"{sum(b is not None for b in c.baseline)} of {len(c.baseline)} seeds reached {c.target}")
        for name, what, c in (("random_subset_learns", SUBSET, rs), ("random_phase1_learns", PHASE1, p1))]
    reached = sum(m is not None for m in rs.distilled)
    headroom = paired_diff_ci(h.e_rf, h.e_ref)
    out += [
        precondition("compare_seeds_reach_target", f"the distilled search reaches {rs.target} on every comparison "
                     "seed (its memory-to-target exists)", "the grid's largest searched sizes",
                     {"points_to_target": rs.distilled, "phase1_points": p1.distilled}, reached == len(rs.distilled),
                     f"{reached} of {len(rs.distilled)} seeds reached the target"),
        precondition("headroom_compare_cell", f"random features (no feature-learning step, all the data) are more "
                     f"than {p.tol:g} worse than the full-data network at the comparison cell: 95% CI over seeds of "
                     f"e_random_features - e_ref above {p.tol:g}",
                     "random features: the two-layer network without its phase-1 step",
                     {"e_ref": _iv(mean_ci(h.e_ref)), "e_random_features": _iv(mean_ci(h.e_rf)),
                      "difference": _iv(headroom)},
                     superiority(headroom, margin=p.tol, what="e_random_features - e_ref")),
        precondition("headroom_grid", f"in every grid cell random features are more than {p.tol:g} worse than the "
                     "full-data network (the memory target e_ref + tol needs the feature-learning step)",
                     "random features: the two-layer network without its phase-1 step",
                     {"least_difference": round(g.least_headroom, 4), "cell": g.headroom_cell, "tol": p.tol},
                     g.least_headroom > p.tol, f"least e_random_features - e_ref {g.least_headroom:.4f} at "
                     f"{g.headroom_cell} against tol {p.tol:g}"),
        precondition("reference_features_in_span_U", f"the full-data feature step puts W_1 in span(U): its least "
                     f"energy fraction over the cells is >= {p.energy_min:g}", "random directions (energy r / d)",
                     {"least_energy_w1": round(g.reference_energy, 4),
                      "mean_random_r_over_d": round(g.energy["mean_random_r_over_d"], 4)},
                     g.reference_energy >= p.energy_min, f"least W_1 energy {g.reference_energy:.4f}"),
        precondition("grid_cells_reach_target", "every grid cell reached the memory target within the searched sizes "
                     "(no censored cell)", "the grid's largest searched sizes",
                     {"cells_reached": g.reached, "cells": g.total}, g.reached == g.total,
                     f"{g.reached} of {g.total} cells reached the target"),
    ]
    statement = ("the composite memory exponent's 95% CI lies above the exponent that counting d + 1 numbers per "
                 "point alone gives on the grid (else the fit cannot tell the law from bookkeeping)")
    if g.fit is None or g.bookkeeping is None:
        out.append(precondition("memory_fit_beats_bookkeeping", statement, "memory = const x (d + 1): bookkeeping "
                                "alone", {"fit": None}, False, "fewer than 3 reached cells: no fit"))
    else:
        out.append(precondition(
            "memory_fit_beats_bookkeeping", statement, "memory = const x (d + 1): bookkeeping alone",
            {"exponent": _iv(g.fit.slope), "bookkeeping_exponent": round(g.bookkeeping, 4)},
            superiority(g.fit.slope, reference=g.bookkeeping, what="memory exponent")))
    return out


def _compression_claim(id: str, c: Compression, what: str, paper_value: str, learns: str,
                       p: ClaimParams) -> Claim:
    ratio = c.ratio()
    return evidence(
        id, f"{what} needs at least {p.min_compression:g}x the distilled set's points to reach {c.target}: 95% CI of "
        f"the geometric-mean ratio of their memories-to-target over seeds above {p.min_compression:g}", paper_value,
        {"ratio": _iv(ratio), "baseline_points": c.baseline, "distilled_points": c.distilled},
        superiority(ratio, reference=p.min_compression, what="memory ratio baseline / distilled"),
        requires=[learns, "compare_seeds_reach_target", "headroom_compare_cell"])


def claims(h: Headline, rs: Compression, p1: Compression, g: Grid, p: ClaimParams) -> list[Claim]:
    """Every claim of the paper at our scale, preconditions first: ``rs`` compares the random subset with the whole
    distilled set (target e_ref + tol), ``p1`` random phase-1 points with the distilled phase-1 set (e_ref + tol/2)."""
    at = f"at {h.budget[0]} points ({h.budget[1]} numbers), paired over seeds"
    excess = paired_diff_ci(h.distilled, h.e_ref)
    slope = g.fit.slope if g.fit else NAN
    grid_regime = ["grid_cells_reach_target", "headroom_grid"]
    return [
        *preconditions(h, rs, p1, g, p),
        evidence("distilled_matches_full_data",
                 f"the distilled set trains the network (same init, same algorithm) to within {p.tol:g} relative test "
                 f"error of the full-data network, {at}: 95% CI of e_distilled - e_ref below {p.tol:g}",
                 "high generalization from Theta~(r^2 d + L) memory (qualitative; no number in the abstract)",
                 {"distilled": _iv(mean_ci(h.distilled)), "full_data": _iv(mean_ci(h.e_ref)), "excess": _iv(excess)},
                 noninferiority(excess, margin=p.tol, what="e_distilled - e_ref"),
                 requires=["headroom_compare_cell"]),
        _compression_claim("random_subset_far_worse", rs, SUBSET, "distillation beats real data at equal memory "
                           "(implied; not quantified in the abstract)", "random_subset_learns", p),
        _compression_claim("phase1_matching_needed", p1, PHASE1, "the feature-learning step must be distilled "
                           "(implied by the analysis)", "random_phase1_learns", p),
        evidence("distilled_points_in_span_U",
                 f"the distilled phase-1 points put most of their energy in span(U): the smallest fraction "
                 f"||P_U X~||^2 / ||X~||^2 over the grid cells is >= {p.energy_min:g} (random points: r / d)",
                 "the low-dimensional structure is encoded into the distilled data (qualitative)",
                 {k: round(v, 4) for k, v in g.energy.items()},
                 exact(g.energy["min_distilled"] >= p.energy_min,
                       f"least distilled energy {g.energy['min_distilled']:.4f} against {p.energy_min:g} (random "
                       f"points {g.energy['mean_random_r_over_d']:.4f})"),
                 requires=["reference_features_in_span_U"]),
        evidence("memory_scales_like_r2d_plus_L",
                 f"the smallest memory reaching within {p.tol:g} of the full-data error grows like (r^2 d + L)^1: "
                 f"the 95% CI of the log-log exponent over the (d, r, L) grid and its seeds lies inside "
                 f"1 +- {p.slope_tol:g}", "memory Theta~(r^2 d + L), i.e. exponent 1 up to log factors",
                 {"exponent": _iv(slope), "r2": round(g.fit.r2, 4) if g.fit else None,
                  "cells_reached": g.reached, "cells": g.total},
                 trend(slope, predicted=1.0, tol=p.slope_tol, what="memory exponent"),
                 requires=[*grid_regime, "memory_fit_beats_bookkeeping"]),
        evidence("phase1_points_scale_like_r2",
                 f"the distilled phase-1 points M1* grow like r^2 (phase-1 memory r^2 d): the 95% CI of the exponent "
                 f"of r in a log-linear fit of M1* on r, d and L lies inside 2 +- {p.slope_tol:g}",
                 "phase-1 memory Theta~(r^2 d): r^2 points of d numbers",
                 {"exponent_r": _iv(g.phase1_r)},
                 trend(g.phase1_r, predicted=2.0, tol=p.slope_tol, what="exponent of M1* on r"),
                 requires=grid_regime),
        evidence("phase2_memory_scales_like_L",
                 f"the distilled phase-2 memory M2* (d + 1) grows like L: the 95% CI of the exponent of L in a "
                 f"log-linear fit of M2* (d + 1) on L, d and r lies inside 1 +- {p.slope_tol:g}",
                 "phase-2 memory Theta~(L)", {"exponent_L": _iv(g.phase2_L)},
                 trend(g.phase2_L, predicted=1.0, tol=p.slope_tol, what="exponent of M2* (d + 1) on L"),
                 requires=grid_regime),
    ]
