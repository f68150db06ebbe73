"""The paper's claims restated for our scale: a pure function from measured numbers to claims of three kinds.

Errors are relative test errors (MSE / Var y; the zero predictor scores 1). "Close to the full-data network" means
an excess of at most ``tol`` (a fraction of the label variance): the full-data network's own error is near 0 here,
so a ratio to it is not a usable yardstick. A method's memory is the fewest points (each d + 1 numbers) with which
it reaches that target; a baseline is compared with distillation by the ratio of these memories (compression at
equal error), so a baseline is judged where it learns, never at a budget where it sits at chance.

Two targets (``tol``, the loose one, and ``tol_near``, near the reference): the comparison cell's claims use the
loose one; ``laws_at`` (declared in params.yaml before the run) names the one whose grid judges the laws and the
grid's preconditions, the other's fits are reported beside them.

- preconditions (the regime): the distilled set beats the strongest trivial baseline of the ladder at the headline
  budget (the real-data baselines at >= as many points: random subset, random phase-1 points, a k-center coreset;
  paired over seeds); each real-data baseline learns the task
  somewhere on its size grid (its error at its largest subset lies below the target, CI over seeds) and every
  method's memory-to-target exists on every comparison seed and grid cell (a count over the fixed design); there is
  headroom (random features, the network without its feature-learning step, trained on all the data, are more than
  ``tol`` worse than the full-data network: at the comparison cell, and in every grid cell, each on its interval over
  seeds); the real-data feature step puts W_1 in span(U) in every cell (interval over seeds); the composite memory
  fit's interval lies above the exponent that counting d + 1 numbers per point alone gives on the grid (else the fit
  cannot tell the law from bookkeeping);
- evidence: the headline error at equal memory, the two compression ratios (the t-interval over seeds of the log
  ratio, the geometric mean reported), the span(U) energy of the distilled points (every grid cell, interval over
  seeds), and the memory laws in their testable form: the abstract's Theta~(r^2 d + L) sizes the paper's algorithm's
  output, an upper bound on the smallest set an (here inferred) distiller needs, so each law is one-sided: the
  composite exponent on r^2 d + L, the exponent of M1* (points) on r and of M2* (d + 1) (numbers) on L (log-linear
  fit on log r, log d, log L, the other factors held fixed) have fit intervals ending below the law's exponent +
  ``slope_tol``; the two-sided fits are reported as measured facts;
- no check: nothing here holds by construction.

Units: a seed (comparison cell: ``compare_seeds``; a grid cell's seeds: ``grid_seeds``) and a run (one grid cell at
one seed: a point of the memory fits, ``grid_runs``). A claim over every cell is ``all_of`` its cells (Holm).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from paperdag.common.plans import SamplePlan
from paperdag.common.stats import Interval, mean_ci, paired_diff_ci
from paperdag.common.verdicts import (
    Claim,
    Ladder,
    all_of,
    evidence,
    exact,
    noninferiority,
    precondition,
    superiority,
)

from .params import ClaimParams, Plans
from .stats import ScalingFits

NAN = Interval(float("nan"), float("nan"), float("nan"), 0, 0.95, "seed")
SUBSET = "a random subset of real data (both phases, ridge lam chosen on validation)"
PHASE1 = "the feature-learning step on random real points (second layer fitted on the real rows)"


@dataclass(frozen=True)
class Headline:
    """The comparison cell at the headline budget, one value per seed (seed order): the distilled set's error, the
    full-data network's and random features' errors; ``budget``: (points, numbers stored); ``rungs``: each trivial
    real-data baseline's error at ``rung_points`` (the first subset size >= the budget's points)."""

    distilled: np.ndarray
    e_ref: np.ndarray
    e_rf: np.ndarray
    budget: tuple[int, int]
    rungs: dict[str, np.ndarray]
    rung_points: int


@dataclass(frozen=True)
class Compression:
    """A real-data baseline's memory-to-target against the distilled set's, per comparison seed (points; None where
    a search ended first); ``target`` names the error to reach, ``largest`` the largest size the baseline tried,
    ``largest_errors`` its error there and ``targets`` the error to reach, per seed."""

    baseline: list[int | None]
    distilled: list[int | None]
    target: str
    largest: int
    largest_errors: np.ndarray
    targets: np.ndarray

    def log_ratio(self) -> Interval:
        """The t-interval over seeds of log(baseline / distilled) where both reached (nan when no seed has both)."""
        logs = [math.log(b / m) for b, m in zip(self.baseline, self.distilled) if b is not None and m is not None]
        return mean_ci(logs, unit="seed") if logs else NAN

    def ratio(self) -> Interval:
        """Geometric-mean ratio baseline / distilled over the seeds where both reached: exp of ``log_ratio``."""
        iv = self.log_ratio()
        return Interval(math.exp(iv.mean), math.exp(iv.lo), math.exp(iv.hi), iv.n, iv.confidence, "seed")

    def learning(self) -> Interval:
        """Error at the largest subset minus the target, paired over seeds (below 0: the baseline learns)."""
        return paired_diff_ci(self.largest_errors, self.targets, unit="seed")

    def summary(self) -> dict[str, object]:
        reached = [b for b in self.baseline if b is not None]
        return {"points_to_target": self.baseline, "reached": len(reached), "seeds": len(self.baseline),
                "median_points": float(np.median(reached)) if reached else None,
                f"error_at_{self.largest}_points": _iv(mean_ci(self.largest_errors, unit="seed")),
                "minus_target": _iv(self.learning())}


@dataclass(frozen=True)
class Grid:
    """The scaling grid at the target that judges the laws (``target``, excess ``tol``; ``laws_at`` names it).

    ``fits``: the memory laws' fits over its reached runs (stats.scaling_fits); ``reached`` / ``total`` runs; per
    (d, r, L) cell, intervals over its seeds: ``headroom`` (e_random_features - e_ref), ``distilled_energy`` (span(U)
    energy of the distilled phase-1 sets at this target; ``headroom`` is e_random_features - (e_ref + the target's
    excess), per run) and ``reference_energy`` (of the full-data networks' W_1;
    ``compare_cell`` is the cell whose seeds are the comparison's); ``energy``: summaries reported; ``reported``: the
    other target's fits, reported beside (not judged); ``censored``: the runs that did not reach it (and in which
    phase's search)."""

    fits: ScalingFits
    reached: int
    total: int
    headroom: dict[str, Interval]
    distilled_energy: dict[str, Interval]
    reference_energy: dict[str, Interval]
    compare_cell: str
    energy: dict[str, float]
    target: str
    laws_at: str
    reported: dict[str, object]
    censored: tuple[str, ...] = ()


def fits_summary(f: ScalingFits) -> dict[str, object]:
    """Every exponent of ``f`` as a two-sided fit interval (measured facts), with its regressor's span."""
    return {"memory_exponent": _iv(f.composite.slope) if f.composite else None,
            "bookkeeping_exponent": round(float(f.bookkeeping), 4) if f.bookkeeping is not None else None,
            "phase1_exponent_r": _iv(f.phase1_r), "phase2_exponent_L": _iv(f.phase2_L),
            "decades_L": round(f.decades_L, 4), "runs": f.runs}


def _iv(x: Interval) -> dict[str, float | int | list[float | None] | None]:
    """An interval for the metrics file (nan, e.g. an exponent the grid cannot fit, as null: JSON has no nan)."""
    def r(v: float) -> float | None:
        return round(float(v), 4) if math.isfinite(v) else None

    return {"mean": r(x.mean), "ci95": [r(x.lo), r(x.hi)], "n": x.n}


def _level(plan: SamplePlan) -> str:
    """The interval's level under ``plan`` (95%, or a sequential plan's final-look level)."""
    return f"{100 * plan.confidence:.3g}% CI"


def _tightest(parts: dict[str, Interval], reference: float) -> dict[str, object]:
    """The cell whose interval's lower end lies closest above ``reference`` (or farthest below it), for measured."""
    cell = min(parts, key=lambda k: parts[k].lo - reference)
    return {"cell": cell, "interval": _iv(parts[cell]), "cells": len(parts)}


def _per_cell(parts: dict[str, Interval], reference: float, what: str, plan: SamplePlan,
              plans: dict[str, SamplePlan] | None = None):
    """``all_of`` over the cells of superiority above ``reference``, the tightest cells first."""
    order = sorted(parts, key=lambda k: parts[k].lo)
    return all_of({k: superiority(parts[k], reference=reference, what=what, plan=(plans or {}).get(k, plan))
                   for k in order})


def preconditions(h: Headline, rs: Compression, p1: Compression, g: Grid, p: ClaimParams,
                  plans: Plans) -> list[Claim]:
    """The regime of the comparisons and of the scaling grid (see the module)."""
    seeds = plans.compare_seeds
    ci = _level(seeds)
    ladder = Ladder.of("lower", {name: mean_ci(e, unit="seed") for name, e in h.rungs.items()})
    strongest = ladder.strongest.name
    gain = paired_diff_ci(h.rungs[strongest], h.distilled, unit="seed")
    out = [precondition(
        "distilled_beats_trivial_baselines", f"the distilled set of {h.budget[0]} points beats the strongest trivial "
        f"real-data baseline at {h.rung_points} points (>= as many): {ci} over seeds of e_baseline - e_distilled "
        "above 0", strongest, {"gain": _iv(gain), "distilled": _iv(mean_ci(h.distilled, unit="seed"))},
        superiority(gain, what=f"e({strongest}) - e_distilled", plan=seeds), ladder=ladder)]
    out += [precondition(
        name, f"{what} learns: at its largest subset ({c.largest} points) its error lies below {c.target}, {ci} over "
        "seeds of the difference below 0", "the memory target", c.summary(),
        superiority(c.learning(), direction="below", what=f"error at {c.largest} points - target", plan=seeds))
        for name, what, c in (("random_subset_learns", SUBSET, rs), ("random_phase1_learns", PHASE1, p1))]
    reached = sum(m is not None for m in rs.distilled)
    headroom = paired_diff_ci(h.e_rf, h.e_ref, unit="seed")
    out += [
        precondition("compare_seeds_reach_target", f"the distilled search reaches {rs.target} on every comparison "
                     "seed (its memory-to-target exists for every seed of the design)", "the grid's largest searched "
                     "sizes", {"points_to_target": rs.distilled, "phase1_points": p1.distilled},
                     exact(reached == len(rs.distilled), f"{reached} of {len(rs.distilled)} seeds reached the target",
                           basis="fixed set")),
        precondition("headroom_compare_cell", f"random features (no feature-learning step, all the data) are more "
                     f"than {p.tol:g} worse than the full-data network at the comparison cell: {ci} over seeds of "
                     f"e_random_features - e_ref above {p.tol:g}",
                     "random features: the two-layer network without its phase-1 step",
                     {"e_ref": _iv(mean_ci(h.e_ref)), "e_random_features": _iv(mean_ci(h.e_rf)),
                      "difference": _iv(headroom)},
                     superiority(headroom, margin=p.tol, what="e_random_features - e_ref", plan=seeds)),
        precondition("headroom_grid", "in every grid cell random features (no feature-learning step, all the data) "
                     f"miss the memory target that judges the laws, {g.target} (it needs the feature-learning step): "
                     "95% CI over the cell's seeds of e_random_features - target above 0, every cell (the worst "
                     "cell's interval decides)",
                     "random features: the two-layer network without its phase-1 step",
                     _tightest(g.headroom, 0.0) | {"target": g.target},
                     _per_cell(g.headroom, 0.0, "e_random_features - target", plans.grid_seeds)),
        precondition("reference_features_in_span_U", f"the full-data feature step puts W_1 in span(U) in every cell: "
                     f"95% CI over the cell's seeds (the comparison cell's at {ci}) of its energy fraction above "
                     f"{p.energy_min:g}",
                     "random directions (energy r / d)",
                     _tightest(g.reference_energy, p.energy_min)
                     | {"mean_random_r_over_d": round(g.energy["mean_random_r_over_d"], 4)},
                     _per_cell(g.reference_energy, p.energy_min, "W_1 energy in span(U)", plans.grid_seeds,
                               {g.compare_cell: seeds})),
        precondition("grid_cells_reach_target", f"every grid run reached the memory target that judges the laws "
                     f"({g.target}) within the searched sizes (no censored run)", "the grid's largest searched sizes",
                     {"runs_reached": g.reached, "runs": g.total, "target": g.target, "censored": list(g.censored)},
                     exact(g.reached == g.total, f"{g.reached} of {g.total} runs reached {g.target}",
                           basis="fixed set")),
    ]
    out.append(precondition(
        "fit_spans_decades_of_L", f"the runs that reached {g.target} span at least {p.min_decades_L:g} decades of L (the "
        "range an L exponent is fitted over)", "the design's widths", {"decades_L": round(g.fits.decades_L, 4),
                                                                       "runs": g.fits.runs},
        exact(g.fits.decades_L >= p.min_decades_L - 1e-9, f"log10(L_max / L_min) = {g.fits.decades_L:.3g} over the "
              f"{g.fits.runs} reached runs (needed {p.min_decades_L:g})", basis="fixed set")))
    statement = (f"at {g.target}, the composite memory exponent's 95% CI lies above the exponent that counting d + 1 "
                 "numbers per point alone gives on the grid (else the fit cannot tell the distiller's memory from "
                 "bookkeeping)")
    fit = g.fits.composite
    if fit is None or g.fits.bookkeeping is None:
        out.append(precondition("memory_fit_beats_bookkeeping", statement, "memory = const x (d + 1): bookkeeping "
                                "alone", {"fit": None},
                                superiority(NAN, what="memory exponent (fewer than 3 reached runs: no fit)",
                                            plan=plans.grid_runs)))
    else:
        out.append(precondition(
            "memory_fit_beats_bookkeeping", statement, "memory = const x (d + 1): bookkeeping alone",
            {"exponent": _iv(fit.slope), "bookkeeping_exponent": round(float(g.fits.bookkeeping), 4)},
            superiority(fit.slope, reference=g.fits.bookkeeping, what="memory exponent", plan=plans.grid_runs)))
    return out


def _compression_claim(id: str, c: Compression, what: str, paper_value: str, learns: str, p: ClaimParams,
                       plans: Plans) -> Claim:
    return evidence(
        id, f"{what} needs at least {p.min_compression:g}x the distilled set's points to reach {c.target}: "
        f"{_level(plans.compare_seeds)} of the mean log ratio of their memories-to-target over seeds above "
        f"log {p.min_compression:g} (the geometric-mean ratio reported)", paper_value,
        {"ratio": _iv(c.ratio()), "log_ratio": _iv(c.log_ratio()), "baseline_points": c.baseline,
         "distilled_points": c.distilled},
        superiority(c.log_ratio(), reference=math.log(p.min_compression), what="log(memory baseline / distilled)",
                    plan=plans.compare_seeds),
        requires=[learns, "compare_seeds_reach_target", "headroom_compare_cell"])


def claims(h: Headline, rs: Compression, p1: Compression, g: Grid, p: ClaimParams, plans: Plans) -> list[Claim]:
    """Every claim of the paper at our scale, preconditions first: ``rs`` compares the random subset with the whole
    distilled set (target e_ref + tol), ``p1`` random phase-1 points with the distilled phase-1 set (e_ref + tol/2)."""
    at = f"at {h.budget[0]} points ({h.budget[1]} numbers), paired over seeds"
    excess = paired_diff_ci(h.distilled, h.e_ref, unit="seed")
    fit = g.fits.composite
    slope = fit.slope if fit else NAN
    grid_regime = ["grid_cells_reach_target", "headroom_grid"]
    runs = plans.grid_runs
    return [
        *preconditions(h, rs, p1, g, p, plans),
        evidence("distilled_matches_full_data",
                 f"the distilled set trains the network (same init, same algorithm) to within {p.tol:g} relative test "
                 f"error of the full-data network, {at}: {_level(plans.compare_seeds)} of e_distilled - e_ref below "
                 f"{p.tol:g}",
                 "high generalization from Theta~(r^2 d + L) memory (qualitative; no number in the abstract)",
                 {"distilled": _iv(mean_ci(h.distilled)), "full_data": _iv(mean_ci(h.e_ref)), "excess": _iv(excess)},
                 noninferiority(excess, margin=p.tol, what="e_distilled - e_ref", plan=plans.compare_seeds),
                 requires=["distilled_beats_trivial_baselines", "headroom_compare_cell"]),
        _compression_claim("random_subset_far_worse", rs, SUBSET, "distillation beats real data at equal memory "
                           "(implied; not quantified in the abstract)", "random_subset_learns", p, plans),
        _compression_claim("phase1_matching_needed", p1, PHASE1, "the feature-learning step must be distilled "
                           "(implied by the analysis)", "random_phase1_learns", p, plans),
        evidence("distilled_points_in_span_U",
                 f"the distilled phase-1 points (searched to {g.target}) put most of their energy in span(U) in every "
                 f"grid cell: 95% CI over the cell's seeds of ||P_U X~||^2 / ||X~||^2 above {p.energy_min:g}, every "
                 "cell (the worst cell's interval decides; random points: r / d)",
                 "the low-dimensional structure is encoded into the distilled data (qualitative)",
                 _tightest(g.distilled_energy, p.energy_min) | {k: round(v, 4) for k, v in g.energy.items()},
                 _per_cell(g.distilled_energy, p.energy_min, "distilled phase-1 energy in span(U)", plans.grid_seeds),
                 requires=["reference_features_in_span_U"]),
        _law("memory_grows_no_faster_than_r2d_plus_L", g, "the smallest memory (M1* + M2*)(d + 1)", "(r^2 d + L)^1",
             "the log-log exponent over the (d, r, L) grid and its seeds", slope, 1.0, p, runs,
             "memory Theta~(r^2 d + L) for the paper's distilled set (its algorithm's output size, an upper bound)",
             {"exponent": _iv(slope), "span_log": round(slope.span or 0.0, 4),
              "r2": round(fit.r2, 4) if fit else None, "runs_reached": g.reached, "runs": g.total},
             [*grid_regime, "memory_fit_beats_bookkeeping"]),
        _law("phase1_points_grow_no_faster_than_r2", g, "the distilled phase-1 points M1*", "r^2 (phase-1 memory r^2 d)",
             "the exponent of r in a log-linear fit of M1* on r, d and L", g.fits.phase1_r, 2.0, p, runs,
             "phase-1 memory Theta~(r^2 d): r^2 points of d numbers (an upper bound)",
             {"exponent_r": _iv(g.fits.phase1_r), "span_log_r": round(g.fits.phase1_r.span or 0.0, 4)}, grid_regime),
        _law("phase2_memory_grows_no_faster_than_L", g, "the distilled phase-2 memory M2* (d + 1)", "L",
             "the exponent of L in a log-linear fit of M2* (d + 1) on L, d and r", g.fits.phase2_L, 1.0, p, runs,
             "phase-2 memory Theta~(L) (an upper bound)",
             {"exponent_L": _iv(g.fits.phase2_L), "span_log_L": round(g.fits.phase2_L.span or 0.0, 4),
              "decades_L": round(g.fits.decades_L, 4)}, [*grid_regime, "fit_spans_decades_of_L"]),
    ]


def _law(id: str, g: Grid, what: str, law: str, fitted: str, exponent: Interval, predicted: float, p: ClaimParams,
         plan: SamplePlan, paper_value: str, measured: dict[str, object], requires: list[str]) -> Claim:
    """A memory law in its testable form: the memory an (inferred) distiller needs grows no faster than the law, the
    fit interval's upper end below predicted + slope_tol; the two-sided fit and the other target's are reported."""
    bound = predicted + p.slope_tol
    return evidence(
        id, f"{what} needed to reach {g.target} grows no faster than {law}: the upper end of the 95% fit interval of "
        f"{fitted} lies below {predicted:g} + {p.slope_tol:g} = {bound:g} (one-sided: the abstract's Theta~ sizes "
        "the paper's algorithm's output, an upper bound on the smallest set; the distiller here is inferred "
        "(distill.py: gradient and kernel-ridge matching), not the paper's, and a memory growing slower does not "
        "contradict the law)", paper_value,
        measured | {"law_exponent": predicted, "target": g.target, "laws_at": g.laws_at,
                    "distiller": "inferred (distill.py), not the paper's", "other_target": g.reported},
        superiority(exponent, direction="below", reference=bound, what=f"{fitted.split(' in ')[0]}", plan=plan),
        requires=requires)
