"""The paper's claims restated for our scale: a pure function from the measured rates and distances to Claims.

A rate claim holds when the bootstrap 95% CI of the fitted log-log slope meets the paper's exponent +- ``slope_tol``
(the bounds hold up to log factors and constants, and our stepsizes span a decade, not an asymptotic range).
"""

from __future__ import annotations

from dataclasses import dataclass

from paperdag.claims import Claim

from .params import ClaimParams
from .rates import Rate


@dataclass(frozen=True)
class Measured:
    """What evaluate measured, per setting where keyed by setting name."""

    rates: dict[str, Rate]  # W1 to the primary limit law vs alpha
    inside_envelope: dict[str, bool]  # every stepsize within the alpha^(1/2) log(1/alpha) envelope (+ floor)
    tail_error: dict[str, tuple[float, float]]  # max_t |P(r > t) - P_G(t)| at (largest, smallest) alpha
    markov_w1: tuple[float, float]  # W1 at the smallest alpha to N(0, Sigma_LR) and to N(0, Sigma_marginal)
    quartic_gibbs: tuple[float, float, float]  # W1 to Gibbs at (largest, smallest) alpha, MC floor at smallest
    quartic_best_gaussian_min: float  # min over alpha of W1 to the best-fitting Gaussian
    quartic_var_rate: Rate  # slope of tr Cov(x - x*) vs alpha in the x^4 setting
    max_drift: float  # largest relative drift of E|y|^2 over the last quarter of burn-in
    max_cov_error: float  # largest relative error of Cov(y) against the exact stepsize covariance


def _rate(r: Rate) -> dict[str, float]:
    return {"slope": round(r.estimate, 3), "ci95": [round(r.lo, 3), round(r.hi, 3)], "stepsizes_fitted": r.points}


def claims(m: Measured, floor_ratio: float, p: ClaimParams) -> list[Claim]:
    """The claims of the module docstring and the issue (see each statement)."""
    tol = p.slope_tol

    def rate_claim(cid: str, what: str, settings: tuple[str, ...], slope: float, paper: str) -> Claim:
        return Claim(cid, f"{what}: log-log slope of W1(y, N(0, Sigma)) vs alpha, bootstrap 95% CI meets "
                          f"{slope:g} +- {tol:g}, in {', '.join(settings)}", paper,
                     {s: _rate(m.rates[s]) for s in settings}, all(m.rates[s].within(slope, tol) for s in settings))

    gaussian = [s for s in m.rates if s != "quartic_rademacher"]
    lr, marginal = m.markov_w1
    g_big, g_small, g_floor = m.quartic_gibbs
    return [
        rate_claim("w1_rate_gaussian_linear", "Gaussian noise, linear mean field (exactly Gaussian steady state)",
                   ("sgd_quadratic_gaussian", "linear_gaussian"), 1.0,
                   "faster than alpha^(1/2): O(alpha), slope ~1 (Sigma_alpha - Sigma = O(alpha))"),
        rate_claim("w1_rate_skewed_noise", "skewed i.i.d. noise (centred exponential)",
                   ("sgd_quadratic_skewed", "linear_skewed"), 0.5,
                   "W1 <= C alpha^(1/2) log(1/alpha): slope ~1/2"),
        rate_claim("w1_rate_nonlinear_drift", "non-quadratic / contractive nonlinear mean field, Gaussian noise",
                   ("sgd_logcosh_gaussian", "nonlinear_gaussian"), 0.5,
                   "W1 <= C alpha^(1/2) log(1/alpha): slope ~1/2"),
        rate_claim("w1_rate_markov_noise", "Markovian noise, limit with the long-run covariance", ("linear_markov",),
                   0.5, "same rate with Markovian noise (Poisson equation): slope ~1/2"),
        Claim("w1_vanishes", "W1(y, N(0, Sigma)) -> 0 as alpha -> 0: the slope's 95% CI lies above 0 in every setting",
              "errors vanish as alpha -> 0", {s: _rate(m.rates[s]) for s in gaussian},
              all(m.rates[s].points >= 3 and m.rates[s].lo > 0 for s in gaussian)),
        Claim("w1_inside_envelope", "W1(alpha) <= C alpha^(1/2) log(1/alpha) + MC floor at every stepsize, C fitted on "
              "the largest stepsize, in every setting", "W1 <= C(d) alpha^(1/2) log(1/alpha)",
              dict(m.inside_envelope), all(m.inside_envelope.values())),
        Claim("tails_approach_gaussian", "max over t in the levels of |P(r > t) - P_Gaussian(r > t)| "
              "(r the Mahalanobis "
              "radius) is smaller at the smallest stepsize than at the largest, in every setting",
              "tail error term decaying in t and alpha",
              {s: {"largest_alpha": round(a, 6), "smallest_alpha": round(b, 6)} for s, (a, b) in m.tail_error.items()},
              all(b < a for a, b in m.tail_error.values())),
        Claim("markov_needs_long_run_covariance", f"Markovian noise: at the smallest stepsize the naive limit with the "
              f"one-step noise covariance is >= {p.baseline_ratio:g}x farther (W1) than the long-run-covariance limit",
              "limit covariance solves A Sigma + Sigma A^T = Gamma_LR (long-run)",
              {"w1_long_run": round(lr, 6), "w1_marginal": round(marginal, 6)}, marginal >= p.baseline_ratio * lr),
        Claim("quartic_gibbs_limit", f"SGD on x^4/4, Rademacher noise, y = x / alpha^(1/4): W1 to the Gibbs law "
              f"exp(-y^4 / (2 sigma^2)) shrinks from the largest to the smallest stepsize and ends within "
              f"{floor_ratio:g}x the MC floor", "non-Gaussian limit ~ exp(-y^4/(2 sigma^2)), validated numerically",
              {"w1_largest_alpha": round(g_big, 6), "w1_smallest_alpha": round(g_small, 6), "floor": round(g_floor, 6)},
              g_small < g_big and g_small <= floor_ratio * g_floor),
        Claim("quartic_not_gaussian", f"x^4 setting: the W1 to the best-fitting centred Gaussian stays >= "
              f"{p.baseline_ratio:g}x the Gibbs W1 (or floor) at the smallest stepsize, at every stepsize",
              "the limit is not Gaussian", {"min_w1_best_gaussian": round(m.quartic_best_gaussian_min, 6),
                                            "gibbs_or_floor": round(max(g_small, g_floor), 6)},
              m.quartic_best_gaussian_min >= p.baseline_ratio * max(g_small, g_floor)),
        Claim("quartic_scaling", f"x^4 setting: Var(x) ~ alpha^(1/2) (scaling alpha^(1/4), not alpha^(1/2)); "
              f"bootstrap 95% CI of the slope meets 0.5 +- {tol:g}", "scaling alpha^(-1/4): Var(x) ~ alpha^(1/2)",
              _rate(m.quartic_var_rate), m.quartic_var_rate.within(0.5, tol)),
        Claim("chains_reached_steady_state", f"sanity: E|y|^2 drifts <= {p.stationarity_tol:g} (relative) "
              f"over the last "
              f"quarter of burn-in, and Cov(y) is within {p.stationarity_tol:g} (relative Frobenius) of the exact "
              f"stepsize covariance where one is known (linear field, i.i.d. noise)",
              "(our check: the simulation reached its steady state)",
              {"max_drift": round(m.max_drift, 5), "max_cov_error": round(m.max_cov_error, 5)},
              m.max_drift <= p.stationarity_tol and m.max_cov_error <= p.stationarity_tol),
    ]
