"""The paper's claims restated for our scale: a pure function from measured numbers to claims of three kinds.

Errors are relative test errors (MSE / Var y; the zero predictor scores 1). "Close to the full-data network" means
an excess of at most ``tol`` (a fraction of the label variance): the full-data network's own error is near 0 here,
so a ratio to it is not a usable yardstick.

- preconditions (the regime): each equal-memory baseline learns at the headline budget (its error interval below the
  zero predictor's 1: a baseline at chance cannot lose to distillation for a reason that concerns distillation);
  there is headroom (random features, the network without its feature-learning step, trained on all the data, is
  more than ``tol`` worse than the full-data network: at the comparison cell over seeds, and in every grid cell, so
  the target is not reachable without learning features); the real-data feature step puts W_1 in span(U) (the
  structure the distilled points should encode is there to encode); the memory fit's interval lies above the
  exponent that counting d + 1 numbers per point alone gives on the grid (else the fit cannot tell the law from
  bookkeeping), and every grid cell reached the target (no censored cell);
- evidence: the headline comparisons (paired over seeds, interval rules), the span(U) energy of the distilled points
  (a count over the fixed grid, ``exact``), the memory exponent (``trend`` of the fitted slope);
- no check: nothing here holds by construction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperdag.common.stats import Interval, mean_ci, paired_diff_ci
from paperdag.common.verdicts import Claim, evidence, exact, noninferiority, precondition, superiority, trend

from .params import ClaimParams
from .stats import PowerFit

BASELINES = {"random_subset": "an equal-memory random subset of real data",
             "no_phase1_match": "distillation without phase-1 gradient matching (random real phase-1 points)"}


@dataclass(frozen=True)
class Headline:
    """The comparison cell at the headline budget, one value per seed (seed order).

    ``errors``: method -> relative test error; ``e_ref`` / ``e_rf``: the full-data network's and random features'
    errors; ``budget``: (points, numbers stored); ``largest``: method -> error interval at the largest budget
    compared (where a baseline would learn first)."""

    errors: dict[str, np.ndarray]
    e_ref: np.ndarray
    e_rf: np.ndarray
    budget: tuple[int, int]
    largest: dict[str, Interval]
    largest_budget: int


@dataclass(frozen=True)
class Grid:
    """The scaling grid.

    ``fit``: memory* ~ (r^2 d + L)^s over the reached cells (None if fewer than 3); ``bookkeeping``: the exponent of
    d + 1 alone on r^2 d + L over the same cells (None without a fit); ``reached`` / ``total`` cells;
    ``least_headroom``: the smallest e_random_features - e_ref over the grid cells, ``headroom_cell`` where;
    ``energy``: min/mean span(U) energy of the distilled phase-1 sets and of random points; ``reference_energy``: the
    least span(U) energy of the full-data networks' W_1."""

    fit: PowerFit | None
    bookkeeping: float | None
    reached: int
    total: int
    least_headroom: float
    headroom_cell: str
    energy: dict[str, float]
    reference_energy: float


def _iv(x: Interval) -> dict[str, float | int | list[float]]:
    return {"mean": round(x.mean, 4), "ci95": [round(x.lo, 4), round(x.hi, 4)], "n": x.n}


def preconditions(h: Headline, g: Grid, p: ClaimParams) -> list[Claim]:
    """The regime of the headline comparisons and of the scaling grid (see the module)."""
    at = f"at {h.budget[0]} points ({h.budget[1]} numbers)"
    out = [precondition(
        f"{m}_learns", f"{BASELINES[m]} learns {at}: 95% CI of its relative test error over seeds below the zero "
        "predictor's 1", "the zero predictor (relative error 1)",
        {"error": _iv(mean_ci(h.errors[m])), f"error_at_{h.largest_budget}_points": _iv(h.largest[m])},
        superiority(mean_ci(h.errors[m]), direction="below", reference=1.0, what=f"{m} error"))
        for m in BASELINES]
    headroom = paired_diff_ci(h.e_rf, h.e_ref)
    out += [
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
    if g.fit is None or g.bookkeeping is None:
        out.append(precondition("memory_fit_beats_bookkeeping", "the memory exponent's 95% CI lies above the exponent "
                                "that counting d + 1 numbers per point gives on the grid",
                                "memory = const x (d + 1): bookkeeping alone", {"fit": None}, False,
                                "fewer than 3 reached cells: no fit"))
    else:
        out.append(precondition(
            "memory_fit_beats_bookkeeping", "the memory exponent's 95% CI lies above the exponent that counting d + 1 "
            "numbers per point alone gives on the grid (else the fit cannot tell the law from bookkeeping)",
            "memory = const x (d + 1): bookkeeping alone",
            {"exponent": _iv(g.fit.slope), "bookkeeping_exponent": round(g.bookkeeping, 4)},
            superiority(g.fit.slope, reference=g.bookkeeping, what="memory exponent")))
    return out


def claims(h: Headline, g: Grid, p: ClaimParams) -> list[Claim]:
    """Every claim of the paper at our scale, preconditions first."""
    at = f"at {h.budget[0]} points ({h.budget[1]} numbers), paired over seeds"
    dist = h.errors["distilled"]
    excess = paired_diff_ci(dist, h.e_ref)
    gains = {m: paired_diff_ci(h.errors[m], p.min_gain * dist) for m in BASELINES}
    slope = g.fit.slope if g.fit else Interval(float("nan"), float("nan"), float("nan"))
    return [
        *preconditions(h, g, p),
        evidence("distilled_matches_full_data",
                 f"the distilled set trains the network (same init, same algorithm) to within {p.tol:g} relative test "
                 f"error of the full-data network, {at}: 95% CI of e_distilled - e_ref below {p.tol:g}",
                 "high generalization from Theta~(r^2 d + L) memory (qualitative; no number in the abstract)",
                 {"distilled": _iv(mean_ci(dist)), "full_data": _iv(mean_ci(h.e_ref)), "excess": _iv(excess)},
                 noninferiority(excess, margin=p.tol, what="e_distilled - e_ref"),
                 requires=["headroom_compare_cell"]),
        evidence("random_subset_far_worse",
                 f"an equal-memory random subset of real data trains to an error at least {p.min_gain:g}x the "
                 f"distilled set's, {at}: 95% CI of e_random_subset - {p.min_gain:g} e_distilled above 0",
                 "distillation beats equal-memory real data (implied; not quantified in the abstract)",
                 {"random_subset": _iv(mean_ci(h.errors["random_subset"])), "distilled": _iv(mean_ci(dist)),
                  "difference": _iv(gains["random_subset"])},
                 superiority(gains["random_subset"], what=f"e_random_subset - {p.min_gain:g} e_distilled"),
                 requires=["random_subset_learns"]),
        evidence("phase1_matching_needed",
                 f"without phase-1 gradient matching (random real phase-1 points, matched phase 2) the error is at "
                 f"least {p.min_gain:g}x the distilled set's, {at}: 95% CI of e_no_phase1 - {p.min_gain:g} e_distilled "
                 "above 0", "the feature-learning step must be distilled (implied by the analysis)",
                 {"no_phase1_match": _iv(mean_ci(h.errors["no_phase1_match"])), "distilled": _iv(mean_ci(dist)),
                  "difference": _iv(gains["no_phase1_match"])},
                 superiority(gains["no_phase1_match"], what=f"e_no_phase1 - {p.min_gain:g} e_distilled"),
                 requires=["no_phase1_match_learns"]),
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
                 requires=["grid_cells_reach_target", "headroom_grid", "memory_fit_beats_bookkeeping"]),
    ]
