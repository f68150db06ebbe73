"""sa_gaussian science against independent oracles: closed-form and discrete-Lyapunov covariances, brute-force
autocovariance sums, scipy / POT distances, explicit bootstrap resampling, quadrature of the Gibbs law, and the
verdicts on wrong inputs. The platform contract is checked by tests/test_paper_contract.py."""

from __future__ import annotations

import numpy as np
import ot
import pyarrow as pa
import pytest
import torch
from scipy import integrate, optimize
from scipy.stats import wasserstein_distance

from paperdag.io import read_json, read_table
from paperdag.common.stats import Interval
from paperdag.common.verdicts import resolve
from paperdag.papers.sa_gaussian.claims import Measured, claims
from paperdag.papers.sa_gaussian.distance import best_scale, bootstrap_w1, directions, w1
from paperdag.papers.sa_gaussian.dynamics import Noise, simulate
from paperdag.papers.sa_gaussian.gibbs import gibbs_second_moment, sample_gibbs
from paperdag.papers.sa_gaussian.markov import long_run_covariance, stationary_law
from paperdag.papers.sa_gaussian.params import ClaimParams
from paperdag.papers.sa_gaussian.problems import (Problem, build_problems, contraction_fixed_point, limit_covariance,
                                                  logcosh_root, rotation, stepsize_covariance)
from paperdag.papers.sa_gaussian.rates import Rate, loglog_rate, within_envelope
from paperdag.papers.sa_gaussian.summary import curvature, limit_gap, ratio_interval, tail_intervals
from paperdag.papers.sa_gaussian.tails import tail_table
from paperdag.papers.sa_gaussian.verify import DISTANCES_FILE

SLUG = "sa_gaussian"
A = np.array([[7.5, 4.5], [-4.5, 6.0]])
GAMMA = np.array([[1.0, 0.3], [0.3, 0.5]])


def _linear(noise: str = "gaussian", extra: dict | None = None) -> Problem:
    L = np.linalg.cholesky(GAMMA).tolist()
    sigma = limit_covariance(A, GAMMA)
    return Problem("lin", "linear", noise, [0.0, 0.0], A.tolist(), GAMMA.tolist(), GAMMA.tolist(), sigma.tolist(),
                   4.0, {"A": A.tolist(), "b": [0.0, 0.0], "L": L, **(extra or {})})


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def test_lyapunov_sigma_matches_empirical_covariance_of_2d_linear_sa() -> None:
    """alpha = 0.005: Cov(y) is within 4% of Sigma (A S + S A^T = Gamma) and within MC error (3%) of the exact
    stepsize covariance; the transposed equation A^T S + S A = Gamma (a wrong Sigma for non-normal A) is rejected."""
    pr = _linear()
    y = simulate(pr, 0.005, 20_000, 12.0, 1.0, _gen(), "cpu").y.numpy()
    cov, sigma = np.cov(y.T), limit_covariance(A, GAMMA)
    assert _rel(cov, sigma) < 0.04
    assert _rel(cov, stepsize_covariance(A, GAMMA, 0.005)) < 0.03
    assert _rel(cov, limit_covariance(A.T, GAMMA)) > 0.1
    np.testing.assert_allclose(A @ sigma + sigma @ A.T, GAMMA, atol=1e-12)


def test_1d_quadratic_steady_state_variance_is_closed_form() -> None:
    """SGD on a x^2/2 with N(0, sigma^2) noise: Var(y) = sigma^2 / (a (2 - alpha a)), not the limit sigma^2/(2a)."""
    a, sigma, alpha = 8.0, 1.5, 0.1
    closed = sigma**2 / (a * (2 - alpha * a))
    assert abs(stepsize_covariance(np.array([[a]]), np.array([[sigma**2]]), alpha)[0, 0] - closed) < 1e-12
    pr = Problem("q", "quadratic", "gaussian", [0.0], [[a]], [[sigma**2]], [[sigma**2]], [[sigma**2 / (2 * a)]], a,
                 {"a": a, "sigma": sigma})
    y = simulate(pr, alpha, 100_000, 12.0, 1.0, _gen(1), "cpu").y.numpy()[:, 0]
    assert abs(y.var() / closed - 1) < 0.02
    assert abs(y.var() / (sigma**2 / (2 * a)) - 1) > 0.1


def test_skewed_noise_has_the_asked_covariance_and_skew() -> None:
    """L (e - 1), e ~ Exp(1): mean 0, covariance L L^T = Gamma, third moment of each e - 1 equal to 2."""
    w = Noise(_linear("skewed"), 200_000, _gen(2), "cpu")().numpy()
    assert np.abs(w.mean(0)).max() < 0.01
    assert _rel(np.cov(w.T), GAMMA) < 0.02
    e = np.linalg.solve(np.linalg.cholesky(GAMMA), w.T)
    assert np.abs((e**3).mean(1) - 2.0).max() < 0.15


def test_long_run_covariance_matches_brute_force_and_simulation() -> None:
    """Gamma_LR = sum_{|k| <= K} C_k with C_k = Phi^T D P^k Phi (matrix powers), and Var(sum_{k<K} phi(s_k)) / K of
    simulated stationary chains; a non-centred phi is refused."""
    P = np.array([[0.6, 0.3, 0.1], [0.1, 0.6, 0.3], [0.3, 0.1, 0.6]])
    phi = np.array([[2.0, 0.5], [-1.0, 0.5], [-1.0, -1.0]])
    pi = stationary_law(P)
    np.testing.assert_allclose(pi @ P, pi, atol=1e-14)
    D = np.diag(pi)
    Cs = [phi.T @ D @ np.linalg.matrix_power(P, k) @ phi for k in range(200)]
    brute = Cs[0] + sum(C + C.T for C in Cs[1:])
    lr = long_run_covariance(P, phi)
    np.testing.assert_allclose(lr, brute, atol=1e-10)
    coef = {"P": P.tolist(), "phi": phi.tolist(), "pi": pi.tolist()}
    noise = Noise(_linear("markov", coef), 20_000, _gen(3), "cpu")
    K = 200
    total = sum(noise() for _ in range(K)).numpy()
    assert _rel(np.cov(total.T) / K, lr) < 0.06
    with pytest.raises(ValueError, match="centred"):
        long_run_covariance(P, phi + 1.0)


def test_roots_and_fixed_points_agree_with_scipy() -> None:
    x = logcosh_root(4.0, 4.0, 1.25)
    assert abs(4.0 * x + 4.0 * np.tanh(x - 1.25)) < 1e-12
    R, c = rotation(0.6), np.array([0.8, -0.5])
    xs = contraction_fixed_point(0.6, R, c)
    ref = optimize.root(lambda z: z - 0.6 * R @ np.tanh(z) - c, np.zeros(2), tol=1e-14).x
    np.testing.assert_allclose(xs, ref, atol=1e-10)


def test_problems_have_hurwitz_jacobians_and_solve_their_lyapunov_equations(smoke_runs) -> None:
    settings = read_json(smoke_runs(SLUG)["prepare"] / "settings.json")
    for name, d in settings.items():
        pr = Problem.from_json(d)
        if pr.drift == "quartic":
            continue
        J, S, G = (np.array(m) for m in (pr.jacobian, pr.sigma, pr.long_run_cov))
        assert np.linalg.eigvals(J).real.min() > 0, name
        np.testing.assert_allclose(J @ S + S @ J.T, G, atol=1e-10, err_msg=name)


def test_distances_equal_scipy_and_pot() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((500, 1)), rng.exponential(size=(500, 1))
    assert abs(w1(a, b, directions(1, 1)) - wasserstein_distance(a[:, 0], b[:, 0])) < 1e-12
    a2, b2 = rng.standard_normal((400, 2)), rng.standard_normal((400, 2)) * [1.0, 2.0] + 0.3
    proj = directions(2, 8)
    assert abs(w1(a2, b2, proj) - ot.sliced_wasserstein_distance(a2, b2, p=1, projections=proj)) < 1e-10


def test_bootstrap_equals_explicit_resampling() -> None:
    """The repeat-by-multiplicity replicates equal the W1 of explicitly resampled (and re-sorted) samples."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((300, 2)), rng.standard_normal((300, 2))
    proj = directions(2, 5)
    fast = bootstrap_w1(a, b, proj, 4, np.random.default_rng(7))
    ref_rng = np.random.default_rng(7)
    slow = [w1(a[ref_rng.integers(0, 300, 300)], b[ref_rng.integers(0, 300, 300)], proj) for _ in range(4)]
    np.testing.assert_allclose(fast, slow, atol=1e-12)


def test_best_scale_minimises_the_w1() -> None:
    rng = np.random.default_rng(2)
    y, z = sample_gibbs(rng, 4000, 1.0), rng.standard_normal(4000)

    def obj(s: float) -> float:
        return float(np.abs(np.sort(y) - s * np.sort(z)).mean())

    ref = optimize.minimize_scalar(obj, bounds=(0.1, 3.0), method="bounded", options={"xatol": 1e-10})
    assert obj(best_scale(y, z)) <= ref.fun + 1e-9


def test_gibbs_sampler_matches_quadrature() -> None:
    """Moments of exp(-y^4 / (2 sigma^2)) by quadrature vs the closed form and the Gamma(1/4) sampler."""
    sigma = 1.7
    dens = lambda y, k: y**k * np.exp(-(y**4) / (2 * sigma**2))  # noqa: E731
    Z = integrate.quad(dens, -np.inf, np.inf, args=(0,))[0]
    m2, m4 = (integrate.quad(dens, -np.inf, np.inf, args=(k,))[0] / Z for k in (2, 4))
    assert abs(gibbs_second_moment(sigma) - m2) < 1e-10
    y = sample_gibbs(np.random.default_rng(3), 400_000, sigma)
    assert abs((y**2).mean() / m2 - 1) < 0.01 and abs((y**4).mean() / m4 - 1) < 0.02
    assert abs(m4 - sigma**2 / 2) < 1e-9  # E y^4 = sigma^2 / 2 (integration by parts)


def test_tail_table_of_a_gaussian_sample_matches_chi2() -> None:
    S = np.array([[2.0, 0.5], [0.5, 1.0]])
    y = np.random.default_rng(4).multivariate_normal([0, 0], S, size=200_000)
    tab = tail_table(y, S, [1.0, 2.0, 3.0])
    assert (np.abs(tab["empirical"] - tab["gaussian"]) < 4 * tab["se"] + 1e-5).all()
    wrong = tail_table(y, S / 2, [1.0, 2.0, 3.0])
    assert (np.abs(wrong["empirical"] - wrong["gaussian"]) > 10 * wrong["se"]).any()


def test_envelope_rejects_slow_decay_and_rate_fit_recovers_slopes() -> None:
    alphas = np.array([0.1, 0.05, 0.025, 0.0125, 0.00625])
    floors = np.full(5, 1e-4)
    assert within_envelope(alphas, 0.2 * np.sqrt(alphas), floors).all()
    assert not within_envelope(alphas, np.full(5, 0.05), floors)[-1]
    rng = np.random.default_rng(5)
    vals = 0.3 * alphas**0.5
    boots = vals[:, None] * np.exp(0.02 * rng.standard_normal((5, 40)))
    r = loglog_rate(alphas, vals, boots, floors, 3.0)
    assert r.within(0.5, 0.0) and not r.within(1.0, 0.2) and r.points == 5
    assert loglog_rate(alphas, vals, boots, np.full(5, 1.0), 3.0).points == 0  # everything below the floor


NAMES = ["sgd_quadratic_gaussian", "sgd_quadratic_skewed", "sgd_logcosh_gaussian", "linear_gaussian", "linear_skewed",
         "linear_markov", "nonlinear_gaussian"]
PARAMS = ClaimParams(slope_tol=0.2, baseline_ratio=3.0, stationarity_tol=0.02)


def _measured(**change) -> Measured:
    """Measurements in the regime (every precondition holds) where every evidence claim holds, with ``change``."""
    slope = {s: Rate(1.0, 0.95, 1.05, 5) if "gaussian" in s and "logcosh" not in s and "nonlinear" not in s
             else Rate(0.5, 0.45, 0.55, 5) for s in NAMES}
    ok = Interval(0.05, 0.04, 0.06)
    base = dict(rates=slope | {"quartic_rademacher": Rate(0.3, 0.2, 0.4, 5)},
                curvature={s: Rate(0.0, -0.05, 0.05, 5) for s in NAMES}, smallest_w1={s: ok for s in NAMES},
                resolution={s: 0.01 for s in NAMES}, inside_envelope={s: True for s in NAMES},
                tail_largest={s: ok for s in NAMES}, tail_gap={s: ok for s in NAMES},
                markov_ratio=Interval(6.0, 5.0, 7.0), markov_w1=(0.02, 0.12), markov_limit_gap=(0.1, 0.01),
                quartic_shrink=ok, quartic_end=(Interval(0.003, 0.002, 0.004), 0.006), quartic_gibbs_gain=[ok, ok],
                quartic_best_ratio=Interval(10.0, 8.0, 12.0), quartic_best_resolved=(ok, 0.006),
                quartic_var_rate=Rate(0.5, 0.49, 0.51, 5), max_drift=0.001, max_cov_error=0.001)
    return Measured(**(base | change))


def _verdicts(m: Measured) -> dict[str, str]:
    return {c.id: c.verdict for c in resolve(claims(m, 3.0, PARAMS))}


def test_claims_hold_in_the_regime_and_fail_on_wrong_measurements() -> None:
    """In the regime every claim holds; wrong slopes, ratios and tails make the evidence fail (not inconclusive)."""
    assert set(_verdicts(_measured()).values()) == {"holds"}
    bad = Rate(-0.2, -0.3, -0.1, 5)  # W1 grows as alpha -> 0
    wrong = _measured(rates={s: bad for s in [*NAMES, "quartic_rademacher"]}, tail_gap={
        s: Interval(-0.05, -0.06, -0.04) for s in NAMES}, markov_ratio=Interval(0.8, 0.7, 0.9),
        quartic_shrink=Interval(-0.01, -0.02, -0.005), quartic_best_ratio=Interval(0.8, 0.7, 0.9),
        quartic_var_rate=Rate(1.0, 0.95, 1.05, 5), inside_envelope={s: False for s in NAMES})
    verdicts = {c.id: (c.kind, c.verdict) for c in resolve(claims(wrong, 3.0, PARAMS))}
    assert {v for k, v in verdicts.values() if k == "evidence"} == {"fails"}, verdicts
    assert verdicts["w1_inside_envelope"] == ("check", "fails")


def test_pre_asymptotic_or_unresolved_rates_are_inconclusive() -> None:
    """A curved log-log line (slope moving by 0.4 across the range, as the nonlinear settings at our scale) or a W1
    at the MC floor makes the rate claims of that setting inconclusive whatever their slope; the others keep theirs."""
    curved = _measured(curvature={**{s: Rate(0.0, -0.05, 0.05, 5) for s in NAMES},
                                  "nonlinear_gaussian": Rate(-0.4, -0.5, -0.3, 5)},
                       rates={**_measured().rates, "nonlinear_gaussian": Rate(0.8, 0.75, 0.85, 5)})
    v = _verdicts(curved)
    assert v["one_regime_nonlinear_gaussian"] == "fails"
    assert v["w1_rate_nonlinear_drift"] == "inconclusive"
    assert v["w1_rate_skewed_noise"] == "holds" and v["w1_vanishes"] == "holds"
    floor = _measured(smallest_w1={**_measured().smallest_w1, "linear_markov": Interval(0.012, 0.008, 0.016)},
                      resolution={s: 0.02 if s == "linear_markov" else 0.01 for s in NAMES})
    v = _verdicts(floor)
    assert v["w1_resolved_linear_markov"] == "fails"
    assert v["w1_rate_markov_noise"] == v["w1_vanishes"] == "inconclusive"
    evidence = {c.id for c in claims(_measured(), 3.0, PARAMS) if c.kind == "evidence"}
    unsteady = _verdicts(_measured(max_drift=0.5))
    assert unsteady["chains_reached_steady_state"] == "fails"
    assert {unsteady[k] for k in evidence} == {"inconclusive"}


def test_curvature_is_zero_on_a_power_law_and_sees_a_bend() -> None:
    """Slope(3 smallest) - slope(3 largest): 0 on c alpha^0.5; on 0.1 alpha^0.5 + alpha (the two-term shape whose
    local slope moves from ~1 toward 0.5) the least-squares difference, -0.23; NaN with 3 usable stepsizes."""
    alphas = 0.5 * 4.0 ** -np.arange(6)
    rng = np.random.default_rng(6)
    floor = np.full(alphas.size, 1e-6)

    def rows(vals):
        return {"alpha": alphas, "w1": vals, "floor": floor,
                "boot": vals[:, None] * np.exp(0.01 * rng.standard_normal((alphas.size, 30)))}

    flat = curvature(rows(0.3 * alphas**0.5), 3.0)
    assert flat.lo < 0 < flat.hi and abs(flat.estimate) < 1e-9
    bent = curvature(rows(0.1 * alphas**0.5 + alphas), 3.0)
    ref = (np.polyfit(np.log(alphas[-3:]), np.log(0.1 * alphas[-3:] ** 0.5 + alphas[-3:]), 1)[0]
           - np.polyfit(np.log(alphas[:3]), np.log(0.1 * alphas[:3] ** 0.5 + alphas[:3]), 1)[0])
    assert abs(bent.estimate - ref) < 1e-12 and bent.hi < -0.2
    assert np.isnan(curvature(rows(0.3 * alphas**0.5) | {"floor": np.r_[floor[:3], np.ones(3)]}, 3.0).estimate)


def test_limit_gap_equals_sliced_w1_of_large_gaussian_samples() -> None:
    """Closed form sqrt(2/pi) |s1 - s2| per direction against the sliced W1 of 4e5-point samples of both limits."""
    pr = _linear("markov")
    pr = Problem("m", "linear", "markov", [0.0, 0.0], A.tolist(), (0.4 * GAMMA).tolist(), GAMMA.tolist(),
                 limit_covariance(A, GAMMA).tolist(), 4.0, pr.coef)
    gap = limit_gap(pr, 8)
    rng = np.random.default_rng(7)
    la, l0 = (np.linalg.cholesky(limit_covariance(A, g)) for g in (GAMMA, 0.4 * GAMMA))
    n = 400_000
    mc = w1(rng.standard_normal((n, 2)) @ la.T, rng.standard_normal((n, 2)) @ l0.T, directions(2, 8))
    assert gap > 0.05 and abs(mc - gap) < 0.03 * gap


def test_ratio_and_tail_intervals() -> None:
    """The ratio interval is the delta-method one; the tail drop interval uses the se at the maximising level."""
    a_boot, b_boot = np.array([1.9, 2.0, 2.1]), np.array([0.95, 1.0, 1.05])
    r = ratio_interval(2.0, a_boot, 1.0, b_boot)
    sd = np.hypot(0.1 / 2.0, 0.05 / 1.0)
    assert r.mean == 2.0 and abs(r.lo - 2 * np.exp(-1.96 * sd)) < 1e-12 and abs(r.hi - 2 * np.exp(1.96 * sd)) < 1e-12
    t = pa.table({"alpha": [0.1, 0.1, 0.01, 0.01], "t": [1.0, 2.0, 1.0, 2.0], "empirical": [0.30, 0.05, 0.31, 0.045],
                  "gaussian": [0.32, 0.046, 0.32, 0.046], "se": [0.001, 0.0005, 0.001, 0.0005]})
    big, drop = tail_intervals(t)
    assert abs(big.mean - 0.02) < 1e-12 and abs(big.hi - big.mean - 1.96 * 0.001) < 1e-12
    assert abs(drop.mean - 0.01) < 1e-12 and abs(drop.hi - drop.mean - 1.96 * np.hypot(0.001, 0.001)) < 1e-12


def test_build_problems_covers_every_setting(smoke_runs) -> None:
    from paperdag.papers.sa_gaussian.pipeline import SETTINGS
    from paperdag.papers.sa_gaussian.problems import SETTINGS as BUILT

    assert SETTINGS == BUILT
    runs = smoke_runs(SLUG)
    assert set(read_json(runs["prepare"] / "settings.json")) == set(SETTINGS)
    for s in SETTINGS:
        dist = read_table(runs[f"verify_{s}"] / DISTANCES_FILE)
        assert (dist["floor"].to_numpy() > 0).all() and (dist["w1"].to_numpy() > 0).all(), s
    assert build_problems  # the builder is what prepare ran
