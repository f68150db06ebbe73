"""The paper's claims restated for our scale: a pure function from the measured rates and distances to claims of
three kinds (``paperdag.common.verdicts``).

Preconditions (the regime): the chains reached their steady state; the W1 estimator resolves the distance it
measures (the W1 at the smallest stepsize lies above ``floor_ratio`` x the Monte-Carlo floor, the W1 of two samples
of the limit law itself: what an exact steady state would score); the stepsizes span one regime (the slope over
the 3 smallest stepsizes differs from the slope over the 3 largest by less than ``slope_tol``: otherwise the
whole-range slope mixes a pre-asymptotic part with the asymptotic one); the tail deviation at the largest stepsize
is resolved from the MC error; the two candidate limits of the Markovian setting differ by more than the
estimator's resolution; in the x^4 setting the Gibbs law beats the strongest trivial baseline, the best-fitting
centred Gaussian, at every stepsize, and the estimator resolves the best Gaussian's W1.
Evidence: a rate holds when the bootstrap 95% CI of the fitted log-log slope lies inside the paper's exponent
+- ``slope_tol`` (``trend``; the bounds hold up to log factors and constants, and our stepsizes span a decade, not
an asymptotic range); the other comparisons use ``superiority`` on bootstrap or Monte-Carlo intervals (summary.py).
A claim over several settings holds when it holds in each, fails when it fails in one, and is inconclusive
otherwise. Check: the envelope C alpha^(1/2) log(1/alpha) fitted on the largest stepsize (passes any decay faster
than about alpha^0.22: reported, not counted).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from paperdag.common.stats import Interval
from paperdag.common.verdicts import (Claim, Judgement, check, equivalence, evidence, precondition, superiority,
                                      trend)

from .params import ClaimParams
from .rates import Rate

STEADY = "chains_reached_steady_state"
MC_FLOOR = ("floor_ratio x the Monte-Carlo floor: the W1 between two independent samples of the limit law, what an "
            "exact steady state scores")


@dataclass(frozen=True)
class Measured:
    """What evaluate measured (summary.py), per setting where keyed by setting name (the Gaussian-limit settings
    unless noted)."""

    rates: dict[str, Rate]  # W1 to the primary limit law vs alpha (every setting; Gibbs for the quartic one)
    curvature: dict[str, Rate]  # slope over the 3 smallest minus over the 3 largest usable stepsizes
    smallest_w1: dict[str, Interval]  # W1 to N(0, Sigma) at the smallest stepsize, bootstrap interval
    resolution: dict[str, float]  # floor_ratio x MC floor at the smallest stepsize
    inside_envelope: dict[str, bool]  # every stepsize within the fitted envelope (+ floor), every setting
    tail_largest: dict[str, Interval]  # max_t |P_hat(r > t) - P_G(r > t)| at the largest stepsize (MC interval)
    tail_gap: dict[str, Interval]  # that tail error at the largest minus at the smallest stepsize
    markov_ratio: Interval  # W1 to N(0, Sigma_marginal) / W1 to N(0, Sigma_LR) at the smallest stepsize
    markov_w1: tuple[float, float]  # those two W1 values (long-run, marginal)
    markov_limit_gap: tuple[float, float]  # closed-form sliced W1 between the two limits; floor_ratio x MC floor
    quartic_shrink: Interval  # x^4: W1 to Gibbs at the largest minus at the smallest stepsize
    quartic_end: tuple[Interval, float]  # x^4: W1 to Gibbs at the smallest stepsize; floor_ratio x MC floor there
    quartic_gibbs_gain: list[Interval]  # x^4, per stepsize: W1 to the best Gaussian - W1 to Gibbs
    quartic_best_ratio: Interval  # x^4: min over alpha of W1 to the best Gaussian / W1 to Gibbs at the smallest
    quartic_best_resolved: tuple[Interval, float]  # x^4: that min W1 (interval); floor_ratio x MC floor there
    quartic_var_rate: Rate  # x^4: slope of tr Cov(x - x*) vs alpha
    max_drift: float  # largest relative drift of E|y|^2 over the last quarter of burn-in
    max_cov_error: float  # largest relative error of Cov(y) against the exact stepsize covariance


def _num(x: float, digits: int = 3) -> float | None:
    """x rounded, None where it is not finite (a rate with too few usable stepsizes): metrics files are strict JSON."""
    return round(x, digits) if math.isfinite(x) else None


def _rate(r: Rate) -> dict[str, float | None]:
    return {"slope": _num(r.estimate), "ci95": [_num(r.lo), _num(r.hi)], "stepsizes_fitted": r.points}


def every(parts: dict[str, Judgement]) -> Judgement:
    """All parts must hold: fails if one fails, inconclusive if one is (and none fails), else holds; the reason
    names each part (the rule is the first part's)."""
    verdicts = {j.verdict for j in parts.values()}
    verdict = "fails" if "fails" in verdicts else "inconclusive" if "inconclusive" in verdicts else "holds"
    reason = "; ".join(f"{k}: {j.reason}" for k, j in parts.items())
    return Judgement(verdict, reason, next(iter(parts.values())).rule)


def _regime(m: Measured, floor_ratio: float, p: ClaimParams) -> list[Claim]:
    """Stationarity, and per Gaussian-limit setting: the estimator resolves W1, the stepsizes span one regime."""
    out = [precondition(
        STEADY, f"the chains reached their steady state: E|y|^2 drifts <= {p.stationarity_tol:g} (relative) over the "
        f"last quarter of burn-in, and Cov(y) is within {p.stationarity_tol:g} (relative Frobenius) of the exact "
        "stepsize covariance where one is known (linear field, i.i.d. noise)",
        "the exact stepsize covariance (discrete Lyapunov) and E|y|^2 at three quarters of the burn-in",
        {"max_drift": round(m.max_drift, 5), "max_cov_error": round(m.max_cov_error, 5), "tol": p.stationarity_tol},
        m.max_drift <= p.stationarity_tol and m.max_cov_error <= p.stationarity_tol,
        f"drift {m.max_drift:.3g}, covariance error {m.max_cov_error:.3g} against {p.stationarity_tol:g}")]
    for s, w in m.smallest_w1.items():
        res = m.resolution[s]
        out.append(precondition(
            f"w1_resolved_{s}", f"{s}: the W1 estimator resolves the distance: W1(y, N(0, Sigma)) at the smallest "
            f"stepsize, bootstrap 95% CI, lies above {floor_ratio:g}x the MC floor", MC_FLOOR,
            {"w1_smallest_alpha": w.rounded(6), "resolution": round(res, 6)},
            superiority(w, margin=res, sesoi=res, what="W1 at the smallest stepsize")))
    for s, c in m.curvature.items():
        out.append(precondition(
            f"one_regime_{s}", f"{s}: the stepsizes span one regime: the log-log slope over the 3 smallest stepsizes "
            f"minus the slope over the 3 largest, bootstrap 95% CI, lies inside +-{p.slope_tol:g}",
            "a straight log-log line (curvature 0: the whole-range slope is the asymptotic one)",
            {"curvature": _rate(c), "whole_range": _rate(m.rates[s])},
            equivalence(c, margin=p.slope_tol, what="slope(3 smallest) - slope(3 largest)")))
    return out


def _baselines(m: Measured, p: ClaimParams) -> list[Claim]:
    """Tails resolved, the Markovian limits distinguishable, the x^4 Gibbs law against the fitted Gaussian."""
    gap, res = m.markov_limit_gap
    best, best_res = m.quartic_best_resolved
    return [
        precondition("tail_deviation_resolved", "at the largest stepsize the tail error max_t |P(r > t) - "
                     "P_Gaussian(r > t)| is resolved from 0 by its MC 95% interval, in every setting (else there is "
                     "no deviation to shrink)", "the binomial Monte-Carlo error of the empirical tail",
                     {s: i.rounded(6) for s, i in m.tail_largest.items()},
                     every({s: superiority(i, what="tail error") for s, i in m.tail_largest.items()})),
        precondition("markov_limits_differ", "Markovian noise: the two candidate limits N(0, Sigma_LR) and "
                     "N(0, Sigma_marginal) differ by more than the estimator resolves (closed-form sliced W1 between "
                     "them against floor_ratio x the MC floor at the smallest stepsize)", MC_FLOOR,
                     {"w1_between_limits": round(gap, 6), "resolution": round(res, 6)}, gap > res,
                     f"sliced W1 between the limits {gap:.4g} against the resolution {res:.4g}"),
        precondition("quartic_gibbs_beats_fitted_gaussian", "x^4 setting: the Gibbs law is closer (W1) to the steady "
                     "state than the best-fitting centred Gaussian at every stepsize (bootstrap 95% CI of the "
                     "difference above 0)", "the best-fitting centred Gaussian (scale minimising the W1)",
                     {"w1_best_gaussian_minus_gibbs": [g.rounded(6) for g in m.quartic_gibbs_gain]},
                     every({f"stepsize {i}": superiority(g, what="W1 best Gaussian - W1 Gibbs")
                            for i, g in enumerate(m.quartic_gibbs_gain)})),
        precondition("quartic_best_gaussian_resolved", "x^4 setting: the W1 estimator resolves the best-fitting "
                     "Gaussian's distance: its smallest W1 over the stepsizes, bootstrap 95% CI, lies above "
                     "floor_ratio x the MC floor", MC_FLOOR, {"min_w1_best_gaussian": best.rounded(6),
                                                              "resolution": round(best_res, 6)},
                     superiority(best, margin=best_res, sesoi=best_res, what="min W1 to the best Gaussian")),
    ]


def _rates(m: Measured, p: ClaimParams) -> list[Claim]:
    """The four rate claims (trend on the whole-range slope) and W1 vanishing (slope above 0)."""
    tol = p.slope_tol

    def rate_claim(cid: str, what: str, settings: tuple[str, ...], slope: float, paper: str) -> Claim:
        return evidence(cid, f"{what}: log-log slope of W1(y, N(0, Sigma)) vs alpha, bootstrap 95% CI inside "
                             f"{slope:g} +- {tol:g}, in {', '.join(settings)}", paper,
                        {s: _rate(m.rates[s]) for s in settings},
                        every({s: trend(m.rates[s], predicted=slope, tol=tol, what="slope") for s in settings}),
                        requires=[STEADY, *(f"{k}_{s}" for s in settings for k in ("w1_resolved", "one_regime"))])

    gaussian = tuple(m.curvature)
    return [
        rate_claim("w1_rate_gaussian_linear", "Gaussian noise, linear mean field (exactly Gaussian steady state)",
                   ("sgd_quadratic_gaussian", "linear_gaussian"), 1.0,
                   "faster than alpha^(1/2): O(alpha), slope ~1 (Sigma_alpha - Sigma = O(alpha))"),
        rate_claim("w1_rate_skewed_noise", "skewed i.i.d. noise (centred exponential)",
                   ("sgd_quadratic_skewed", "linear_skewed"), 0.5, "W1 <= C alpha^(1/2) log(1/alpha): slope ~1/2"),
        rate_claim("w1_rate_nonlinear_drift", "non-quadratic / contractive nonlinear mean field, Gaussian noise",
                   ("sgd_logcosh_gaussian", "nonlinear_gaussian"), 0.5,
                   "W1 <= C alpha^(1/2) log(1/alpha): slope ~1/2"),
        rate_claim("w1_rate_markov_noise", "Markovian noise, limit with the long-run covariance", ("linear_markov",),
                   0.5, "same rate with Markovian noise (Poisson equation): slope ~1/2"),
        evidence("w1_vanishes", "W1(y, N(0, Sigma)) -> 0 as alpha -> 0: the slope's bootstrap 95% CI lies above 0 in "
                 "every setting", "errors vanish as alpha -> 0", {s: _rate(m.rates[s]) for s in gaussian},
                 every({s: superiority(m.rates[s], what="slope") for s in gaussian}),
                 requires=[STEADY, *(f"w1_resolved_{s}" for s in gaussian)]),
    ]


def _tails_and_limits(m: Measured, floor_ratio: float, p: ClaimParams) -> list[Claim]:
    """Tails, the Markovian long-run covariance, and the x^4 setting's non-Gaussian limit and scaling."""
    lr, marginal = m.markov_w1
    end, end_res = m.quartic_end
    ratio_margin = p.baseline_ratio - 1.0
    return [
        evidence("tails_approach_gaussian", "max over t in the levels of |P(r > t) - P_Gaussian(r > t)| (r the "
                 "Mahalanobis radius) is smaller at the smallest stepsize than at the largest, in every setting (MC "
                 "95% CI of the drop above 0)", "tail error term decaying in t and alpha",
                 {s: g.rounded(6) for s, g in m.tail_gap.items()},
                 every({s: superiority(g, what="tail error drop") for s, g in m.tail_gap.items()}),
                 requires=[STEADY, "tail_deviation_resolved"]),
        evidence("markov_needs_long_run_covariance", f"Markovian noise: at the smallest stepsize the naive limit with "
                 f"the one-step noise covariance is >= {p.baseline_ratio:g}x farther (W1) than the long-run-covariance "
                 "limit (95% CI of the ratio)", "limit covariance solves A Sigma + Sigma A^T = Gamma_LR (long-run)",
                 {"w1_long_run": round(lr, 6), "w1_marginal": round(marginal, 6),
                  "ratio": m.markov_ratio.rounded(3)},
                 superiority(m.markov_ratio, reference=1.0, margin=ratio_margin, what="W1 marginal / W1 long-run"),
                 requires=[STEADY, "markov_limits_differ"]),
        evidence("quartic_gibbs_limit", f"SGD on x^4/4, Rademacher noise, y = x / alpha^(1/4): W1 to the Gibbs law "
                 f"exp(-y^4 / (2 sigma^2)) shrinks from the largest to the smallest stepsize and ends within "
                 f"{floor_ratio:g}x the MC floor (95% CIs)", "non-Gaussian limit ~ exp(-y^4/(2 sigma^2)), validated "
                 "numerically", {"w1_drop": m.quartic_shrink.rounded(6), "w1_smallest_alpha": end.rounded(6),
                                 "floor_ratio_x_floor": round(end_res, 6)},
                 every({"shrinks": superiority(m.quartic_shrink, what="W1 largest - smallest stepsize"),
                        "at the floor": superiority(end, direction="below", reference=end_res,
                                                    what="W1 at the smallest stepsize")}),
                 requires=[STEADY, "quartic_gibbs_beats_fitted_gaussian"]),
        evidence("quartic_not_gaussian", f"x^4 setting: the W1 to the best-fitting centred Gaussian stays >= "
                 f"{p.baseline_ratio:g}x the Gibbs W1 at the smallest stepsize, at every stepsize (95% CI of the "
                 "ratio at the best Gaussian's closest stepsize)", "the limit is not Gaussian",
                 {"ratio": m.quartic_best_ratio.rounded(3)},
                 superiority(m.quartic_best_ratio, reference=1.0, margin=ratio_margin,
                             what="min W1 best Gaussian / W1 Gibbs"),
                 requires=[STEADY, "quartic_best_gaussian_resolved"]),
        evidence("quartic_scaling", f"x^4 setting: Var(x) ~ alpha^(1/2) (scaling alpha^(1/4), not alpha^(1/2)); "
                 f"bootstrap 95% CI of the slope inside 0.5 +- {p.slope_tol:g}", "scaling alpha^(-1/4): Var(x) ~ "
                 "alpha^(1/2)", _rate(m.quartic_var_rate),
                 trend(m.quartic_var_rate, predicted=0.5, tol=p.slope_tol, what="slope of Var(x)"),
                 requires=[STEADY]),
    ]


def claims(m: Measured, floor_ratio: float, p: ClaimParams) -> list[Claim]:
    """The claims of the module docstring (see each statement); ``floor_ratio``: the analysis' resolution factor."""
    envelope = check("w1_inside_envelope", "W1(alpha) <= C alpha^(1/2) log(1/alpha) + MC floor at every stepsize, C "
                     "fitted on the largest stepsize, in every setting (passes any decay faster than about "
                     "alpha^0.22: a shape check, not the paper's explicit bound)",
                     "W1 <= C(d) alpha^(1/2) log(1/alpha)", dict(m.inside_envelope), all(m.inside_envelope.values()),
                     "outside the envelope in " + ", ".join(s for s, ok in m.inside_envelope.items() if not ok))
    return [*_regime(m, floor_ratio, p), *_baselines(m, p), *_rates(m, p), *_tails_and_limits(m, floor_ratio, p),
            envelope]
