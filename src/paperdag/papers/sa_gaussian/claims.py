"""The paper's claims restated for our scale: a pure function from the measured rates, distances and bounds to claims
of three kinds (``paperdag.common.verdicts``).

Preconditions (the regime): the chains reached their steady state; the W1 estimator resolves the distance it
measures (the W1 at the smallest stepsize lies above ``floor_ratio`` x the Monte-Carlo floor, the W1 of two samples
of the limit law itself: what an exact steady state would score); for a rate-1/2 claim, the two-term model
W1 = c_h alpha^(1/2) + c_1 alpha fits at least ``min_points`` of the smallest stepsizes (lack-of-fit test, rates.py);
for the O(alpha) claim of the exactly Gaussian settings, the closed-form W1 of their steady state N(0, S_alpha) has
the predicted slope over the judged stepsizes within ``slope_tol`` (a positive control: the stepsizes are
asymptotic); the explicit bound has content (lies below the trivial coupling bound) somewhere in the sweep; the tail
deviation at the largest stepsize is resolved from the MC error; the two candidate limits of the Markovian setting
differ by more than the estimator's resolution; in the x^4 setting the Gibbs law beats the strongest trivial
baseline, the best-fitting centred Gaussian, at every stepsize, and the estimator resolves the best Gaussian's W1.
Evidence: the measured W1 lies below the explicit bound (bound.py) wherever that bound has content; the rate 1/2
holds when the bootstrap 95% CI of c_h lies above 0 (``superiority``: a alpha^(1/2) term is present, the leading one
below the crossover (c_h / c_1)^2); the O(alpha) rate when the CI of the slope over the smallest stepsizes lies
inside 1 +- ``slope_tol`` (``trend``); the other comparisons use ``superiority`` on bootstrap or Monte-Carlo
intervals (summary.py). A claim over several settings holds when it holds in each, fails when it fails in one, and
is inconclusive otherwise. Check: the sliced W1 (a lower bound on W1) lies below the exact subsample W1 (an
upper-biased estimate) in 2-D.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from paperdag.common.stats import Interval
from paperdag.common.verdicts import Claim, Judgement, check, evidence, precondition, superiority, trend

from .params import ClaimParams
from .rates import Rate, TwoTerm

STEADY = "chains_reached_steady_state"
CONTENT = "explicit_bound_has_content"
MC_FLOOR = ("floor_ratio x the Monte-Carlo floor: the W1 between two independent samples of the limit law, what an "
            "exact steady state scores")
HALF_RATE = {"w1_rate_skewed_noise": ("skewed i.i.d. noise (centred exponential)",
                                      ("sgd_quadratic_skewed", "linear_skewed")),
             "w1_rate_nonlinear_drift": ("non-quadratic / contractive nonlinear mean field, Gaussian noise",
                                         ("sgd_logcosh_gaussian", "nonlinear_gaussian")),
             "w1_rate_markov_noise": ("Markovian noise, limit with the long-run covariance", ("linear_markov",))}
GAUSSIAN_LINEAR = ("sgd_quadratic_gaussian", "linear_gaussian")


@dataclass(frozen=True)
class Bounded:
    """The explicit bound at one (setting, stepsize) beside the measured W1 (exact in 1-D; in 2-D the exact W1 on
    subsamples, an upper-biased estimate)."""

    alpha: float
    w1: Interval
    bound: float
    trivial: float
    terms: tuple[float, float, float]

    @property
    def has_content(self) -> bool:
        return self.bound < self.trivial


@dataclass(frozen=True)
class Measured:
    """What evaluate measured (summary.py), per setting where keyed by setting name (the Gaussian-limit settings
    unless noted)."""

    rates: dict[str, Rate]  # whole-range log-log slope of W1 to the primary limit (every setting; Gibbs for x^4)
    two_term: dict[str, TwoTerm | None]  # rate-1/2 settings: the two-term model (None: < min_points usable)
    local: dict[str, Rate]  # Gaussian-linear settings: slope over the min_points smallest usable stepsizes
    exact_local: dict[str, float]  # their closed-form W1's slope over the same stepsizes
    smallest_w1: dict[str, Interval]  # W1 to N(0, Sigma) at the smallest stepsize, bootstrap interval
    resolution: dict[str, float]  # floor_ratio x MC floor at the smallest stepsize
    bounds: dict[str, list[Bounded]]  # i.i.d.-noise settings: the explicit bound per stepsize (alphas decreasing)
    content_from: dict[str, float]  # i.i.d.-noise settings: largest stepsize (halving ladder) where it has content
    sliced_vs_exact: dict[str, list[tuple[float, float, Interval]]]  # 2-D: (alpha, sliced W1, exact subsample W1)
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


def _num(x: float, digits: int = 4) -> float | None:
    """x rounded to ``digits`` significant digits, None where it is not finite: metrics files are strict JSON."""
    return float(f"{x:.{digits}g}") if math.isfinite(x) else None


def _rate(r: Rate) -> dict[str, float | None]:
    return {"slope": _num(r.estimate), "ci95": [_num(r.lo), _num(r.hi)], "stepsizes_fitted": r.points}


def _two_term(t: TwoTerm | None) -> dict | None:
    if t is None:
        return None
    return {"c_half": {"mean": _num(t.c_half.mean), "ci95": [_num(t.c_half.lo), _num(t.c_half.hi)]},
            "c_one": {"mean": _num(t.c_one.mean), "ci95": [_num(t.c_one.lo), _num(t.c_one.hi)]},
            "crossover_alpha": _num(t.crossover), "window": list(t.alphas), "chi2": _num(t.chi2),
            "p_value": _num(t.p_value)}


def every(parts: dict[str, Judgement]) -> Judgement:
    """All parts must hold: fails if one fails, inconclusive if one is (and none fails), else holds; the reason
    names each part (the rule is the first part's)."""
    verdicts = {j.verdict for j in parts.values()}
    verdict = "fails" if "fails" in verdicts else "inconclusive" if "inconclusive" in verdicts else "holds"
    reason = "; ".join(f"{k}: {j.reason}" for k, j in parts.items())
    return Judgement(verdict, reason, next(iter(parts.values())).rule)


def _regime(m: Measured, floor_ratio: float, p: ClaimParams, min_points: int, level: float) -> list[Claim]:
    """Stationarity; per Gaussian-limit setting the estimator resolves W1; the rate models' regimes."""
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
    for s, t in m.two_term.items():
        ok = t is not None and t.points >= min_points and t.p_value >= level
        why = (f"fewer than {min_points} usable stepsizes" if t is None else
               f"chi^2 {t.chi2:.3g} on {t.points - 2} dof, p = {t.p_value:.3g} against {level:g}, "
               f"on the {t.points} smallest stepsizes")
        out.append(precondition(
            f"two_term_fits_{s}", f"{s}: the two-term model W1 = c_h alpha^(1/2) + c_1 alpha fits the m >= "
            f"{min_points} smallest usable stepsizes (lack-of-fit chi^2 p-value >= {level:g}, bootstrap sds; the "
            "largest such window is used)", "the two-term expansion of W1 in powers of alpha^(1/2)",
            {"fit": _two_term(t)}, ok, why))
    for s in GAUSSIAN_LINEAR:
        exact, local = m.exact_local[s], m.local[s]
        out.append(precondition(
            f"asymptotic_window_{s}", f"{s}: the judged stepsizes are asymptotic: the closed-form W1 of the exactly "
            f"Gaussian steady state N(0, S_alpha) (discrete Lyapunov) against N(0, Sigma) has log-log slope within "
            f"{p.slope_tol:g} of 1 over the {local.points} smallest usable stepsizes (a positive control of the "
            "trend test)", "the closed-form W1 of N(0, S_alpha), O(alpha)",
            {"closed_form_slope": _num(exact), "stepsizes": local.points},
            math.isfinite(exact) and abs(exact - 1.0) < p.slope_tol,
            f"closed-form slope {exact:.4g} against 1 +- {p.slope_tol:g}"))
    return out


def _bound(m: Measured) -> list[Claim]:
    """The explicit bound: its content (precondition) and the measured W1 below it (evidence)."""
    pairs = {f"{s} alpha={b.alpha:g}": b for s, rows in m.bounds.items() for b in rows if b.has_content}
    table = {s: [{"alpha": b.alpha, "w1": b.w1.rounded(5), "bound": _num(b.bound), "trivial": _num(b.trivial),
                  "slack": _num(b.bound / b.w1.mean), "terms": [_num(t) for t in b.terms]} for b in rows]
             for s, rows in m.bounds.items()}
    content = precondition(
        CONTENT, "the explicit bound has content somewhere in the sweep: at >= 1 (setting, stepsize) it lies below "
        "the trivial coupling bound (E|y|^2 + tr Sigma)^(1/2) >= W1 (else no measurement could contradict it)",
        "the trivial coupling bound (E|y|^2 + tr Sigma)^(1/2), E|y|^2 by the theorem's moment bound",
        {"pairs_with_content": list(pairs), "largest_alpha_with_content": {s: _num(a) for s, a in
                                                                           m.content_from.items()}},
        bool(pairs), f"{len(pairs)} of {sum(map(len, m.bounds.values()))} (setting, stepsize) pairs have content")
    judged = {k: superiority(b.w1, direction="below", reference=b.bound, what="W1") for k, b in pairs.items()}
    bound = evidence(
        "w1_within_explicit_bound", "W1(y, N(0, Sigma)) <= the explicit Stein bound T1 + T2 + T3 (bound.py: the "
        "setting's mu, L, |D^2 g|, noise moments and Stein factors; i.i.d. noise, alpha < 2 mu / L^2) at every "
        "(setting, stepsize) where the bound has content (the W1's 95% CI below it); elsewhere reported with its "
        "slack; the Markovian and x^4 settings have other theorems, not evaluated",
        "W1 <= C(d, constants) alpha^(1/2) log(1/alpha), explicit, for SGD, linear SA and contractive SA",
        {"judged": list(pairs), "per_setting": table},
        every(judged) if judged else Judgement("inconclusive", "no pair with content", "superiority"),
        requires=[STEADY, CONTENT])
    return [content, bound]


def _baselines(m: Measured) -> list[Claim]:
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
    """The rate claims (two-term model for rate 1/2, local slope for O(alpha)) and W1 vanishing (slope above 0)."""
    def half(cid: str, what: str, settings: tuple[str, ...]) -> Claim:
        parts = {s: superiority(m.two_term[s].c_half, what="c_h") if m.two_term[s] is not None else
                 Judgement("inconclusive", "no two-term fit (too few usable stepsizes)", "superiority")
                 for s in settings}
        return evidence(cid, f"{what}: W1 = c_h alpha^(1/2) + c_1 alpha, the alpha^(1/2) term present (bootstrap 95% "
                        f"CI of c_h above 0; it leads below the crossover (c_h / c_1)^2), in {', '.join(settings)}",
                        "W1 <= C alpha^(1/2) log(1/alpha): rate 1/2", {s: _two_term(m.two_term[s]) for s in settings},
                        every(parts), requires=[STEADY, *(f"{k}_{s}" for s in settings
                                                          for k in ("w1_resolved", "two_term_fits"))])

    gaussian = tuple(m.smallest_w1)
    return [
        evidence("w1_rate_gaussian_linear", f"Gaussian noise, linear mean field (exactly Gaussian steady state): "
                 f"log-log slope of W1 over the smallest stepsizes, bootstrap 95% CI inside 1 +- {p.slope_tol:g}, "
                 f"in {', '.join(GAUSSIAN_LINEAR)}",
                 "faster than alpha^(1/2): O(alpha) (Sigma_alpha - Sigma = O(alpha))",
                 {s: _rate(m.local[s]) | {"closed_form_slope": _num(m.exact_local[s])} for s in GAUSSIAN_LINEAR},
                 every({s: trend(m.local[s], predicted=1.0, tol=p.slope_tol, what="slope") for s in GAUSSIAN_LINEAR}),
                 requires=[STEADY, *(f"{k}_{s}" for s in GAUSSIAN_LINEAR for k in ("w1_resolved",
                                                                                   "asymptotic_window"))]),
        *(half(cid, what, settings) for cid, (what, settings) in HALF_RATE.items()),
        evidence("w1_vanishes", "W1(y, N(0, Sigma)) -> 0 as alpha -> 0: the log-log slope over the sweep, bootstrap "
                 "95% CI, lies above 0 in every setting", "errors vanish as alpha -> 0",
                 {s: _rate(m.rates[s]) for s in gaussian},
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


def _sliced_check(m: Measured) -> Claim:
    """Sliced W1 <= W1 <= E exact subsample W1: the sliced value below the exact one's upper 95% limit."""
    bad = [f"{s} alpha={a:g}: sliced {sl:.4g} > exact {ex.hi:.4g}" for s, rows in m.sliced_vs_exact.items()
           for a, sl, ex in rows if sl > ex.hi]
    return check("sliced_below_exact_w1", "2-D settings: the sliced W1 (a lower bound on W1) lies below the upper 95% "
                 "limit of the exact W1 on subsamples (POT's LP; an upper-biased estimate of W1) at every stepsize",
                 "sliced W1 <= W1", {s: [{"alpha": a, "sliced": _num(sl), "exact_subsample": ex.rounded(5)}
                                         for a, sl, ex in rows] for s, rows in m.sliced_vs_exact.items()},
                 not bad, "; ".join(bad))


def claims(m: Measured, floor_ratio: float, p: ClaimParams, min_points: int, level: float) -> list[Claim]:
    """The claims of the module docstring (see each statement); ``floor_ratio``: the analysis' resolution factor;
    ``min_points`` and ``level``: the two-term model's window (rates.two_term)."""
    return [*_regime(m, floor_ratio, p, min_points, level), *_bound(m), *_baselines(m), *_rates(m, p),
            *_tails_and_limits(m, floor_ratio, p), _sliced_check(m)]
