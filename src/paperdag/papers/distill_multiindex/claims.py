"""The paper's claims restated for our scale: a pure function from measured numbers to ``Claim``s.

Errors are relative test errors (MSE / Var y; the zero predictor scores 1). "Close to the full-data network" means
an excess of at most ``tol`` (a fraction of the label variance): the full-data network's own error is near 0 here,
so a ratio to it is not a usable yardstick.
"""

from __future__ import annotations

from paperdag.claims import Claim

from .params import ClaimParams
from .stats import Interval, PowerFit


def claims(headline: dict[str, Interval], e_ref: Interval, budget: tuple[int, int], energy: dict[str, float],
           fit: PowerFit | None, cells: tuple[int, int], p: ClaimParams) -> list[Claim]:
    """``headline``: each method's error over seeds at the headline ``budget`` = (points, memory); ``e_ref``: the
    full-data error there; ``energy``: min/mean span(U) energy of the distilled phase-1 sets and of random points;
    ``fit``: memory* ~ (r^2 d + L)^s over the reached grid cells (None if fewer than 3); ``cells``: (reached, all)."""
    dist, rand, plain = headline["distilled"], headline["random_subset"], headline["no_phase1_match"]
    at = f"at {budget[0]} points ({budget[1]} numbers), mean and 95% CI over seeds"
    reached, total = cells
    slope = fit.slope if fit else Interval(float("nan"), float("nan"), float("nan"))
    return [
        Claim("distilled_matches_full_data",
              f"the distilled set trains the network (same init, same algorithm) to within {p.tol:g} relative test "
              f"error of the full-data network, {at}: upper CI of the distilled error <= full-data error + {p.tol:g}",
              "high generalization from Theta~(r^2 d + L) memory (qualitative; no number in the abstract)",
              {"distilled": dist.rounded(), "full_data": e_ref.rounded()}, dist.hi <= e_ref.estimate + p.tol),
        Claim("random_subset_far_worse",
              f"an equal-memory random subset of real data trains to an error at least {p.min_gain:g}x the distilled "
              f"set's, {at}, with disjoint CIs",
              "distillation beats equal-memory real data (implied; not quantified in the abstract)",
              {"random_subset": rand.rounded(), "distilled": dist.rounded()},
              rand.estimate >= p.min_gain * dist.estimate and rand.lo > dist.hi),
        Claim("phase1_matching_needed",
              f"without phase-1 gradient matching (random real phase-1 points, matched phase 2) the error is at least "
              f"{p.min_gain:g}x the distilled set's, {at}, with disjoint CIs",
              "the feature-learning step must be distilled (implied by the analysis)",
              {"no_phase1_match": plain.rounded(), "distilled": dist.rounded()},
              plain.estimate >= p.min_gain * dist.estimate and plain.lo > dist.hi),
        Claim("distilled_points_in_span_U",
              f"the distilled phase-1 points put most of their energy in span(U): the smallest fraction "
              f"||P_U X~||^2 / ||X~||^2 over the grid cells is >= {p.energy_min:g} (random points: r / d)",
              "the low-dimensional structure is encoded into the distilled data (qualitative)",
              {k: round(v, 4) for k, v in energy.items()}, energy["min_distilled"] >= p.energy_min),
        Claim("memory_scales_like_r2d_plus_L",
              f"the smallest memory reaching within {p.tol:g} of the full-data error grows like (r^2 d + L)^1: the "
              f"log-log exponent over the (d, r, L) grid and its seeds is within 1 +- {p.slope_tol:g}, its 95% CI "
              f"excludes 0 (memory does grow), and every cell reached the target",
              "memory Theta~(r^2 d + L), i.e. exponent 1 up to log factors",
              {"exponent": slope.rounded(), "r2": round(fit.r2, 4) if fit else None, "cells_reached": reached,
               "cells": total},
              fit is not None and reached == total and abs(slope.estimate - 1) <= p.slope_tol and slope.lo > 0),
    ]
