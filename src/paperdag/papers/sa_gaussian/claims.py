"""The paper's claims restated for our scale: a pure function from the measured rates, distances and bounds to claims
of three kinds (``paperdag.common.verdicts``).

Preconditions (the regime): the chains reached their steady state (the second moment's drift over the last quarter of
burn-in, and where it is exact the covariance error, below ``stationarity_tol`` with their Monte-Carlo intervals); the
W1 estimator resolves the distance it measures (the W1's 95% CI at the smallest stepsize of the declared window above
``floor_ratio`` x the Monte-Carlo floor, the W1 of two samples of the limit law itself: what an exact steady state would
score); for a rate-1/2 claim, the two-term model W1 = c_h alpha^(1/2) + c_1 alpha is fitted on its declared window,
every resolved stepsize of the sweep (>= ``min_points``; rates.py), each point resolved in the same sense; for the
O(alpha) claim of the exactly Gaussian settings, the closed-form W1 of their steady state N(0, S_alpha) has the
predicted slope over the same window within ``slope_tol`` (a positive control: the stepsizes are asymptotic); the tail
deviation at the largest stepsize is resolved from the MC error; the two candidate limits of the Markovian setting
differ by more than the estimator resolves; in the x^4 setting the Gibbs law beats the strongest trivial baseline of the
ladder (the W1-optimal and the moment-matched centred Gaussians) at every stepsize, and the estimator resolves the best
Gaussian's W1.
Evidence: W1 / (the explicit bound) does not grow as alpha falls (``noninferiority`` of the fit interval of its log-log
slope against -``ratio_slope_margin``: the measured error decays at least at the bound's order alpha^(1/2)
log(1/alpha)), where W1 itself is measured above its floor (the 1-D i.i.d. settings); the rate 1/2 holds when the fit
interval of c_h lies above 0 (``superiority``) and that term leads in the window: its smallest stepsize a_min lies below
the crossover alpha_c = (c_h / c_1)^2 (the fit interval of the lead c_h - a_min^(1/2) c_1 above 0; a c_h > 0 that does
not lead is inconclusive, "sqrt(alpha) not leading"; a c_h < 0 fails); the O(alpha) rate when the fit interval of the
slope over the window lies inside 1 +- ``slope_tol`` (``trend``); tails approach the Gaussian's in alpha (largest vs
smallest stepsize) and decay in the deviation level t (at the smallest stepsize the errors at ``tail_high`` lie below
those at ``tail_low``); the other comparisons use ``superiority`` on bootstrap or Monte-Carlo intervals (summary.py). A
claim over several settings, stepsizes or levels is ``all_of`` its parts (holds when every part holds, fails when a part
fails under Holm's correction).
Checks (true by a proof or by construction, reported, not counted): the measured W1 lies below the explicit bound
(bound.py proves it; its slack per pair is reported; the probes' pairs judged with their chains' stationarity); W1
vanishes (log-log slope above 0); the sliced W1 (a lower bound on W1) lies below the exact W1 of the chains' groups
(an upper-biased estimate; transport.py) in 2-D, judged only where each lies above its own floor.

Units: a chain (bootstrap and Monte-Carlo intervals over the simulated chains), a group of the chains (exact W1 in 2-D,
unit ``subsample``), a stepsize (fits over the sweep: ``stepsizes_1d`` or ``stepsizes``), a draw of the MC floor; each
judged under its plan in params.yaml.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from paperdag.common.plans import SamplePlan
from paperdag.common.stats import Interval
from paperdag.common.verdicts import (Claim, Judgement, Ladder, all_of, check, evidence, exact, noninferiority,
                                      precondition, superiority, trend)

from .params import ClaimParams, Plans
from .rates import TwoTerm

STEADY = "chains_reached_steady_state"
MC_FLOOR = ("floor_ratio x the Monte-Carlo floor: the W1 between two independent samples of the limit law, what an "
            "exact steady state scores")
HALF_RATE = {"w1_rate_skewed_noise": ("skewed i.i.d. noise (centred exponential)",
                                      ("sgd_quadratic_skewed", "linear_skewed")),
             "w1_rate_nonlinear_drift": ("non-quadratic / contractive nonlinear mean field, Gaussian noise",
                                         ("sgd_logcosh_gaussian", "nonlinear_gaussian")),
             "w1_rate_markov_noise": ("Markovian noise, limit with the long-run covariance", ("linear_markov",))}
GAUSSIAN_LINEAR = ("sgd_quadratic_gaussian", "linear_gaussian")
NO_FIT = Interval(math.nan, math.nan, math.nan, 0, 0.95, "stepsize", "fit")  # a rate without its stepsizes


@dataclass(frozen=True)
class Bounded:
    """The explicit bound at one (setting, stepsize) beside the measured W1 (exact in 1-D, a bootstrap interval over
    chains; in 2-D the exact W1 of quantized groups of the chains, an upper-biased estimate with its t-interval over
    the groups)."""

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
    unless noted). ``chains`` names each setting's chain plan (``Plans`` field) and ``probe`` the probes'."""

    chains: dict[str, str]  # every setting: the plan of its chains (chains_1d, chains_2d, chains_quartic)
    rates: dict[str, Interval]  # whole-range log-log slope of W1 to the primary limit (every setting; Gibbs for x^4)
    two_term: dict[str, TwoTerm | None]  # rate-1/2 settings: the two-term model (None: < min_points usable)
    window: dict[str, list[tuple[float, Interval, float]]]  # its window: (alpha, W1, floor_ratio x MC floor)
    local: dict[str, Interval]  # Gaussian-linear settings: slope over the min_points smallest usable stepsizes
    exact_local: dict[str, float]  # their closed-form W1's slope over the same stepsizes
    smallest_w1: dict[str, Interval]  # W1 to N(0, Sigma) at the window's smallest stepsize, bootstrap interval
    resolution: dict[str, float]  # floor_ratio x MC floor there
    resolved_alpha: dict[str, float]  # that stepsize: the smallest whose W1 is >= floor_ratio x its MC floor
    bounds: dict[str, list[Bounded]]  # i.i.d.-noise settings: the explicit bound per stepsize (alphas decreasing)
    content_from: dict[str, float]  # i.i.d.-noise settings: largest stepsize (halving ladder) where it has content
    sliced_vs_exact: dict[str, list[tuple[float, float, float, Interval, float]]]  # 2-D: (alpha, sliced W1, its
    # floor_ratio x MC floor, exact W1 of the groups, floor_ratio x the exact W1's floor)
    bound_ratio: dict[str, Interval]  # 1-D i.i.d. settings: log-log slope of W1 / bound over the window
    tail_decay: dict[str, dict[str, Interval]]  # per setting, "t=a vs t=b": tail error at a - at b, smallest stepsize
    tail_largest: dict[str, Interval]  # max_t |P_hat(r > t) - P_G(r > t)| at the largest stepsize (MC interval)
    tail_gap: dict[str, Interval]  # that tail error at the largest minus at the smallest stepsize
    markov_ratio: Interval  # W1 to N(0, Sigma_marginal) / W1 to N(0, Sigma_LR) at the smallest stepsize
    markov_w1: tuple[float, float]  # those two W1 values (long-run, marginal)
    markov_limit_gap: tuple[float, Interval]  # closed-form sliced W1 between the two limits; floor_ratio x MC floor
    quartic_shrink: Interval  # x^4: W1 to Gibbs at the largest minus at the smallest stepsize
    quartic_end: tuple[Interval, float]  # x^4: W1 to Gibbs at the smallest stepsize; floor_ratio x MC floor there
    quartic_rungs: dict[str, float]  # x^4: each trivial Gaussian's W1 to the steady state, mean over the stepsizes
    quartic_gain: dict[str, list[Interval]]  # x^4, per rung and stepsize: W1 to the rung - W1 to Gibbs
    quartic_best_ratio: Interval  # x^4: min over alpha of W1 to the best Gaussian / W1 to Gibbs at the smallest
    quartic_best_resolved: tuple[Interval, float]  # x^4: that min W1 (interval); floor_ratio x MC floor there
    quartic_var_rate: Interval  # x^4: slope of tr Cov(x - x*) vs alpha
    drift: dict[str, Interval]  # "setting alpha=a": relative drift of E|y|^2 over the last quarter of burn-in
    probe_drift: dict[str, Interval]  # the same for the probes' chains, "setting alpha=a" of the probe
    cov_error: dict[str, Interval]  # "setting alpha=a" (linear field, i.i.d. noise): relative covariance error


def _num(x: float, digits: int = 4) -> float | None:
    """x rounded to ``digits`` significant digits, None where it is not finite: metrics files are strict JSON."""
    return float(f"{x:.{digits}g}") if math.isfinite(x) else None


def _fit(r: Interval) -> dict[str, float | None]:
    return {"slope": _num(r.mean), "ci95": [_num(r.lo), _num(r.hi)], "stepsizes_fitted": r.n, "span": _num(r.span
                                                                                                          or 0.0)}


def _ci(x: Interval, digits: int = 6) -> dict:
    return x.rounded(digits) | {"n": x.n}


def _two_term(t: TwoTerm | None) -> dict | None:
    if t is None:
        return None
    return {"c_half": {"mean": _num(t.c_half.mean), "ci95": [_num(t.c_half.lo), _num(t.c_half.hi)]},
            "c_one": {"mean": _num(t.c_one.mean), "ci95": [_num(t.c_one.lo), _num(t.c_one.hi)]},
            "lead_at_smallest_alpha": {"mean": _num(t.lead.mean), "ci95": [_num(t.lead.lo), _num(t.lead.hi)]},
            "crossover_alpha": "inf" if t.crossover == math.inf else _num(t.crossover),
            "window": list(t.alphas), "smallest_alpha": min(t.alphas), "chi2": _num(t.chi2),
            "lack_of_fit_p": _num(t.p_value), "birge_ratio": _num(t.birge)}


def _leading(c_half: Judgement, lead: Judgement, crossover: float, smallest: float) -> Judgement:
    """c_h's verdict, judged only where the alpha^(1/2) term leads at the window's smallest stepsize: a c_h > 0 whose
    lead c_h - a_min^(1/2) c_1 is not resolved above 0 is inconclusive (sqrt(alpha) not leading: alpha_c below the
    window); a c_h < 0 fails wherever (there is no alpha^(1/2) term to lead)."""
    if c_half.verdict != "holds" or lead.verdict == "holds":
        return c_half
    cross = "inf" if crossover == math.inf else f"{crossover:.3g}"
    return replace(c_half, verdict="inconclusive", cause="range", reason=f"{c_half.reason}, but sqrt(alpha) not "
                   f"leading: crossover alpha_c = {cross} against the window's smallest stepsize {smallest:g} "
                   f"({lead.reason})", redo=lambda c: _leading(c_half.redo(c), lead.redo(c), crossover, smallest))


def _sweep(m: Measured, plans: Plans, s: str) -> SamplePlan:
    """The plan of a setting's stepsizes: the 1-D sweep or the 2-D one."""
    return plans.stepsizes_1d if m.chains[s] == "chains_1d" else plans.stepsizes


def _steady(m: Measured, p: ClaimParams, plans: Plans) -> list[Claim]:
    """The sweep's chains reached their steady state (drift and covariance error below tol)."""
    def plan(label: str) -> SamplePlan:
        return getattr(plans, m.chains[label.split(" ")[0]])

    tol = p.stationarity_tol
    drift = {f"drift {k}": superiority(x, direction="below", reference=tol, what="E|y|^2 drift", plan=plan(k))
             for k, x in m.drift.items()}
    cov = {f"covariance {k}": superiority(x, direction="below", reference=tol, what="covariance error",
                                          plan=plan(k)) for k, x in m.cov_error.items()}
    return [
        precondition(STEADY, f"the chains reached their steady state at every (setting, stepsize) of the sweep: the "
                     f"relative drift of E|y|^2 over the last quarter of burn-in, and the relative Frobenius error of "
                     f"Cov(y) against the exact stepsize covariance where one is known (linear field, i.i.d. noise), "
                     f"each with its 95% Monte-Carlo interval over the chains below {tol:g}",
                     "the exact stepsize covariance (discrete Lyapunov) and E|y|^2 at three quarters of the burn-in",
                     {"drift_max": _num(max(x.hi for x in m.drift.values())),
                      "cov_error_max": _num(max(x.hi for x in m.cov_error.values())), "tol": tol,
                      "pairs": len(drift) + len(cov)}, all_of(drift | cov)),
    ]


def _regime(m: Measured, floor_ratio: float, p: ClaimParams, min_points: int, plans: Plans) -> list[Claim]:
    """Per Gaussian-limit setting the estimator resolves W1; the rate models' regimes."""
    out = []
    for s, w in m.smallest_w1.items():
        res = m.resolution[s]
        out.append(precondition(
            f"w1_resolved_{s}", f"{s}: the W1 estimator resolves the distance over the claims' declared window "
            f"(every stepsize whose W1 is >= {floor_ratio:g}x its MC floor): W1(y, N(0, Sigma)) at the window's "
            f"smallest stepsize, bootstrap 95% CI over the chains, lies above {floor_ratio:g}x the MC floor", MC_FLOOR,
            {"alpha": m.resolved_alpha[s], "w1": w.rounded(6), "resolution": round(res, 6)},
            superiority(w, reference=res, what=f"W1 at the window's smallest stepsize {m.resolved_alpha[s]:g}",
                        plan=getattr(plans, m.chains[s]))))
    for s, t in m.two_term.items():
        points = {f"alpha={a:g}": superiority(w, reference=res, what="W1", plan=getattr(plans, m.chains[s]))
                  for a, w, res in m.window.get(s, [])}
        judged = all_of(points) if t is not None and points else superiority(
            NO_FIT, what=f"the two-term fit (fewer than {min_points} usable stepsizes)", plan=_sweep(m, plans, s))
        out.append(precondition(
            f"two_term_fits_{s}", f"{s}: the two-term model W1 = c_h alpha^(1/2) + c_1 alpha is fitted on its "
            f"declared window, every resolved stepsize of the sweep (>= {min_points}: >= {min_points - 2} degrees of "
            f"freedom), each resolved (its W1's bootstrap 95% CI above {floor_ratio:g}x its MC floor); its lack of "
            "fit widens c_h's interval by the Birge ratio", "the MC floor at each window stepsize",
            {"fit": _two_term(t)}, judged))
    for s in GAUSSIAN_LINEAR:
        closed, local = m.exact_local[s], m.local[s]
        out.append(precondition(
            f"asymptotic_window_{s}", f"{s}: the judged stepsizes are asymptotic: the closed-form W1 of the exactly "
            f"Gaussian steady state N(0, S_alpha) (discrete Lyapunov) against N(0, Sigma) has log-log slope within "
            f"{p.slope_tol:g} of 1 over the declared window, every resolved stepsize ({local.n} here; a positive "
            "control of the trend test)", "the closed-form W1 of N(0, S_alpha), O(alpha)",
            {"closed_form_slope": _num(closed), "stepsizes": local.n},
            exact(math.isfinite(closed) and abs(closed - 1.0) < p.slope_tol,
                  f"closed-form slope {closed:.4g} against 1 +- {p.slope_tol:g}", basis="closed form")))
    return out


def _bound(m: Measured, p: ClaimParams, plans: Plans) -> list[Claim]:
    """The explicit bound: the measured W1 below it (a check: proven), and the evidence that W1 / bound does not grow
    as alpha falls (the measured error decays at least at the bound's order)."""
    pairs = {f"{s} alpha={b.alpha:g}": (s, b) for s, rows in m.bounds.items() for b in rows if b.has_content}
    table = {s: [{"alpha": b.alpha, "w1": b.w1.rounded(5), "bound": _num(b.bound), "trivial": _num(b.trivial),
                  "slack": _num(b.bound / b.w1.mean), "content": b.has_content, "terms": [_num(t) for t in b.terms]}
                 for b in rows] for s, rows in m.bounds.items()}
    tol = p.stationarity_tol

    def plan(s: str, w: Interval) -> SamplePlan:
        return plans.subsamples if w.unit == "subsample" else getattr(plans, m.chains[s])

    def pair(key: str, s: str, b: Bounded) -> Judgement:
        below = superiority(b.w1, direction="below", reference=b.bound, what="W1", plan=plan(s, b.w1))
        if key not in m.probe_drift:
            return below
        steady = superiority(m.probe_drift[key], direction="below", reference=tol, what="the probe's E|y|^2 drift",
                             plan=plans.probe_chains)
        return all_of({"probe steady": steady, "below the bound": below})

    judged = {k: pair(k, s, b) for k, (s, b) in pairs.items()}
    none = superiority(NO_FIT, what="W1 below the bound (no pair with content)", plan=plans.stepsizes)
    slack = [b.bound / b.w1.mean for _, b in pairs.values()]
    bound = check(
        "w1_within_explicit_bound", "W1(y, N(0, Sigma)) <= the explicit Stein bound T1 + T2 + T3 (bound.py: "
        "constants derived by the paper's method for each setting: mu, L, |D^2 g|, noise moments, Stein factors; "
        "i.i.d. noise, alpha < 2 mu / L^2): a proven inequality, checked (the W1's 95% CI below it) at every "
        "(setting, stepsize) where the bound lies below the coupling bound (E|y|^2 + tr Sigma)^(1/2), the probes' "
        f"pairs with their chains' drift below {tol:g}; the slack bound / W1 of every pair is reported",
        "W1 <= C(d, constants) alpha^(1/2) log(1/alpha), explicit, for SGD, linear SA and contractive SA",
        {"judged": list(pairs), "slack_range": [_num(min(slack, default=math.nan)), _num(max(slack, default=math.nan))],
         "largest_alpha_with_content": {s: _num(a) for s, a in m.content_from.items()},
         "probe_drift": {k: _ci(x) for k, x in m.probe_drift.items()}, "per_setting": table},
        all_of(judged) if judged else none)
    margin = p.ratio_slope_margin
    parts = {s: noninferiority(r, margin=margin, direction="above", what="slope of log(W1 / bound)",
                               plan=_sweep(m, plans, s)) for s, r in m.bound_ratio.items()}
    ratio = evidence(
        "w1_to_bound_ratio_falls", f"W1 / (the explicit bound) does not grow as alpha falls: its log-log slope over "
        f"the declared window (every resolved stepsize), 95% fit interval, lies above -{margin:g}, in the settings "
        f"where W1 itself is measured above its floor ({', '.join(m.bound_ratio) or 'none'}: the exact 1-D W1 of "
        "the chains; in 2-D the exact W1 is upper-biased by a floor that falls slowly with the sample and the "
        "sliced W1 is only a lower bound)",
        "errors vanish at the explicit order alpha^(1/2) log(1/alpha)",
        {s: _fit(r) for s, r in m.bound_ratio.items()},
        all_of(parts) if parts else superiority(NO_FIT, what="slope of log(W1 / bound)", plan=plans.stepsizes),
        requires=[STEADY, *(f"w1_resolved_{s}" for s in m.bound_ratio)])
    return [bound, ratio]


def _baselines(m: Measured, plans: Plans) -> list[Claim]:
    """Tails resolved, the Markovian limits distinguishable, the x^4 Gibbs law against the trivial Gaussians."""
    gap, res = m.markov_limit_gap
    best, best_res = m.quartic_best_resolved
    quartic = getattr(plans, m.chains["quartic_rademacher"])
    ladder = Ladder.of("lower", m.quartic_rungs)
    strongest = ladder.strongest.name
    return [
        precondition("tail_deviation_resolved", "at the largest stepsize the tail error max_t |P(r > t) - "
                     "P_Gaussian(r > t)| is resolved from 0 by its MC 95% interval over the chains, in every setting "
                     "(else there is no deviation to shrink)", "the binomial Monte-Carlo error of the empirical tail",
                     {s: i.rounded(6) for s, i in m.tail_largest.items()},
                     all_of({s: superiority(i, what="tail error", plan=getattr(plans, m.chains[s]))
                             for s, i in m.tail_largest.items()})),
        precondition("markov_limits_differ", "Markovian noise: the two candidate limits N(0, Sigma_LR) and "
                     "N(0, Sigma_marginal) differ by more than the estimator resolves: the closed-form sliced W1 "
                     "between them lies above floor_ratio x the MC floor (its 95% CI over the floor's draws at the "
                     "sweep's stepsizes)", MC_FLOOR, {"w1_between_limits": round(gap, 6), "resolution": _ci(res)},
                     superiority(res, direction="below", reference=gap, what="floor_ratio x the MC floor",
                                 plan=plans.floor_draws)),
        precondition("quartic_gibbs_beats_fitted_gaussian", f"x^4 setting: the Gibbs law is closer (W1) to the steady "
                     f"state than the strongest trivial baseline, the {strongest}, at every stepsize (bootstrap 95% "
                     "CI of the difference over the chains above 0)", strongest,
                     {f"w1_{strongest}_minus_gibbs": [g.rounded(6) for g in m.quartic_gain[strongest]]},
                     all_of({f"stepsize {i}": superiority(g, what=f"W1 {strongest} - W1 Gibbs", plan=quartic)
                             for i, g in enumerate(m.quartic_gain[strongest])}), ladder=ladder),
        precondition("quartic_best_gaussian_resolved", "x^4 setting: the W1 estimator resolves the best-fitting "
                     "Gaussian's distance: its smallest W1 over the stepsizes, bootstrap 95% CI, lies above "
                     "floor_ratio x the MC floor", MC_FLOOR, {"min_w1_best_gaussian": best.rounded(6),
                                                              "resolution": round(best_res, 6)},
                     superiority(best, reference=best_res, what="min W1 to the best Gaussian", plan=quartic)),
    ]


def _rates(m: Measured, p: ClaimParams, plans: Plans) -> list[Claim]:
    """The rate claims (two-term model for rate 1/2, local slope for O(alpha)) and W1 vanishing (slope above 0)."""
    def part(s: str) -> Judgement:
        t, plan = m.two_term[s], _sweep(m, plans, s)
        if t is None:
            return superiority(NO_FIT, what="c_h", plan=plan)
        lead = superiority(t.lead, what="the lead c_h - a_min^(1/2) c_1", plan=plan)
        return _leading(superiority(t.c_half, what="c_h", plan=plan), lead, t.crossover, min(t.alphas))

    def half(cid: str, what: str, settings: tuple[str, ...]) -> Claim:
        parts = {s: part(s) for s in settings}
        return evidence(cid, f"{what}: W1 = c_h alpha^(1/2) + c_1 alpha, the alpha^(1/2) term present (95% fit "
                        f"interval of c_h above 0), held only where that term leads in the window (the window's "
                        f"smallest stepsize a_min below the crossover alpha_c = (c_h / c_1)^2: the 95% fit interval of "
                        f"c_h - a_min^(1/2) c_1 above 0; else inconclusive, sqrt(alpha) not leading; c_h < 0 fails), "
                        f"in {', '.join(settings)}",
                        "W1 <= C alpha^(1/2) log(1/alpha): rate 1/2",
                        {s: _two_term(m.two_term[s]) for s in settings}, all_of(parts),
                        requires=[STEADY, *(f"{k}_{s}" for s in settings for k in ("w1_resolved", "two_term_fits"))])

    gaussian = tuple(m.smallest_w1)
    return [
        evidence("w1_rate_gaussian_linear", f"Gaussian noise, linear mean field (exactly Gaussian steady state): "
                 f"log-log slope of W1 over the declared window (every resolved stepsize), 95% fit interval inside "
                 f"1 +- {p.slope_tol:g}, "
                 f"in {', '.join(GAUSSIAN_LINEAR)}",
                 "faster than alpha^(1/2): O(alpha) (Sigma_alpha - Sigma = O(alpha))",
                 {s: _fit(m.local[s]) | {"closed_form_slope": _num(m.exact_local[s])} for s in GAUSSIAN_LINEAR},
                 all_of({s: trend(m.local[s], predicted=1.0, tol=p.slope_tol, what="slope",
                               plan=_sweep(m, plans, s)) for s in GAUSSIAN_LINEAR}),
                 requires=[STEADY, *(f"{k}_{s}" for s in GAUSSIAN_LINEAR for k in ("w1_resolved",
                                                                                   "asymptotic_window"))]),
        *(half(cid, what, settings) for cid, (what, settings) in HALF_RATE.items()),
        check("w1_vanishes", "W1(y, N(0, Sigma)) -> 0 as alpha -> 0: the log-log slope over the sweep, 95% fit "
              "interval, lies above 0 in every setting (any positive slope passes: a check; the rates are judged by "
              "the rate claims)", "errors vanish as alpha -> 0", {s: _fit(m.rates[s]) for s in gaussian},
              all_of({s: superiority(m.rates[s], what="slope", plan=_sweep(m, plans, s)) for s in gaussian})),
    ]


def _tails_and_limits(m: Measured, floor_ratio: float, p: ClaimParams, plans: Plans) -> list[Claim]:
    """Tails, the Markovian long-run covariance, and the x^4 setting's non-Gaussian limit and scaling."""
    lr, marginal = m.markov_w1
    end, end_res = m.quartic_end
    ratio_margin = p.baseline_ratio - 1.0
    quartic = getattr(plans, m.chains["quartic_rademacher"])
    return [
        evidence("tails_approach_gaussian", "max over t in the levels of |P(r > t) - P_Gaussian(r > t)| (r the "
                 "Mahalanobis radius) is smaller at the smallest stepsize than at the largest, in every setting (MC "
                 "95% CI of the drop over the chains above 0)", "tail error term decaying in alpha",
                 {s: g.rounded(6) for s, g in m.tail_gap.items()},
                 all_of({s: superiority(g, what="tail error drop", plan=getattr(plans, m.chains[s]))
                         for s, g in m.tail_gap.items()}),
                 requires=[STEADY, "tail_deviation_resolved"]),
        evidence("tails_decay_in_t", f"at the smallest stepsize the tail error |P(r > t) - P_Gaussian(r > t)| at the "
                 f"high levels t = {', '.join(f'{t:g}' for t in p.tail_high)} lies below that at every low level "
                 f"t = {', '.join(f'{t:g}' for t in p.tail_low)}, in every setting (MC 95% CI of each difference "
                 "over the chains above 0)", "tail error term decaying in the deviation level t",
                 {s: {k: x.rounded(6) for k, x in d.items()} for s, d in m.tail_decay.items()},
                 all_of({f"{s} {k}": superiority(x, what="tail error low t - high t",
                                                  plan=getattr(plans, m.chains[s]))
                         for s, d in m.tail_decay.items() for k, x in d.items()}),
                 requires=[STEADY]),
        evidence("markov_needs_long_run_covariance", f"Markovian noise: at the smallest stepsize the naive limit with "
                 f"the one-step noise covariance is >= {p.baseline_ratio:g}x farther (W1) than the long-run-covariance "
                 "limit (95% CI of the ratio over the chains)",
                 "limit covariance solves A Sigma + Sigma A^T = Gamma_LR (long-run)",
                 {"w1_long_run": round(lr, 6), "w1_marginal": round(marginal, 6),
                  "ratio": m.markov_ratio.rounded(3)},
                 superiority(m.markov_ratio, reference=1.0, margin=ratio_margin, what="W1 marginal / W1 long-run",
                             plan=getattr(plans, m.chains["linear_markov"])),
                 requires=[STEADY, "markov_limits_differ"]),
        evidence("quartic_gibbs_limit", f"SGD on x^4/4, Rademacher noise, y = x / alpha^(1/4): W1 to the Gibbs law "
                 f"exp(-y^4 / (2 sigma^2)) shrinks from the largest to the smallest stepsize and ends within "
                 f"{floor_ratio:g}x the MC floor (95% CIs over the chains)", "non-Gaussian limit ~ "
                 "exp(-y^4/(2 sigma^2)), validated numerically",
                 {"w1_drop": m.quartic_shrink.rounded(6), "w1_smallest_alpha": end.rounded(6),
                  "floor_ratio_x_floor": round(end_res, 6)},
                 all_of({"shrinks": superiority(m.quartic_shrink, what="W1 largest - smallest stepsize", plan=quartic),
                         "at the floor": superiority(end, direction="below", reference=end_res,
                                                     what="W1 at the smallest stepsize", plan=quartic)}),
                 requires=[STEADY, "quartic_gibbs_beats_fitted_gaussian"]),
        evidence("quartic_not_gaussian", f"x^4 setting: the W1 to the best-fitting centred Gaussian stays >= "
                 f"{p.baseline_ratio:g}x the Gibbs W1 at the smallest stepsize, at every stepsize (95% CI of the "
                 "ratio at the best Gaussian's closest stepsize)", "the limit is not Gaussian",
                 {"ratio": m.quartic_best_ratio.rounded(3)},
                 superiority(m.quartic_best_ratio, reference=1.0, margin=ratio_margin,
                             what="min W1 best Gaussian / W1 Gibbs", plan=quartic),
                 requires=[STEADY, "quartic_best_gaussian_resolved"]),
        evidence("quartic_scaling", f"x^4 setting: Var(x) ~ alpha^(1/2) (scaling alpha^(1/4), not alpha^(1/2)); "
                 f"95% fit interval of the slope inside 0.5 +- {p.slope_tol:g}", "scaling alpha^(-1/4): Var(x) ~ "
                 "alpha^(1/2)", _fit(m.quartic_var_rate),
                 trend(m.quartic_var_rate, predicted=0.5, tol=p.slope_tol, what="slope of Var(x)",
                       plan=plans.quartic_stepsizes),
                 requires=[STEADY]),
    ]


def _sliced_check(m: Measured, plans: Plans) -> Claim:
    """Sliced W1 <= W1 <= E exact W1 of a group: the exact W1's interval over the groups above the sliced value, judged
    only at the pairs where each lies above its own floor (the sliced W1 above floor_ratio x its MC floor, the exact
    W1's interval above floor_ratio x its floor: two values that measure the distance, not the noise)."""
    rows = [(s, a, sl, sl_res, ex, ex_res) for s, pts in m.sliced_vs_exact.items() for a, sl, sl_res, ex, ex_res in pts]
    parts = {f"{s} alpha={a:g}": superiority(ex, reference=sl, what="exact W1 of the groups", plan=plans.subsamples)
             for s, a, sl, sl_res, ex, ex_res in rows if sl > sl_res and ex.lo > ex_res}
    none = superiority(replace(NO_FIT, unit="subsample", method="t"), what="no (setting, stepsize) with both "
                       "distances above their floors", plan=plans.subsamples)
    return check("sliced_below_exact_w1", "2-D settings: the sliced W1 (a lower bound on W1) lies below the 95% "
                 "interval of the exact W1 over disjoint groups of the chains (POT's LP on the groups quantized on a "
                 "fixed grid, floor beside; an upper-biased estimate of W1), judged at every "
                 "stepsize where both lie above floor_ratio x their own floors (else the comparison is vacuous)",
                 "sliced W1 <= W1",
                 {s: [{"alpha": a, "sliced": _num(sl), "sliced_resolution": _num(sl_res),
                       "exact_subsample": _ci(ex, 5), "exact_resolution": _num(ex_res),
                       "judged": sl > sl_res and ex.lo > ex_res} for a, sl, sl_res, ex, ex_res in pts]
                  for s, pts in m.sliced_vs_exact.items()}, all_of(parts) if parts else none)


def claims(m: Measured, floor_ratio: float, p: ClaimParams, min_points: int, plans: Plans) -> list[Claim]:
    """The claims of the module docstring (see each statement); ``floor_ratio``: the analysis' resolution factor;
    ``min_points``: the two-term model's smallest window (rates.two_term); ``plans``: the sample-size plans."""
    return [*_steady(m, p, plans), *_regime(m, floor_ratio, p, min_points, plans), *_bound(m, p, plans),
            *_baselines(m, plans), *_rates(m, p, plans), *_tails_and_limits(m, floor_ratio, p, plans),
            _sliced_check(m, plans)]

