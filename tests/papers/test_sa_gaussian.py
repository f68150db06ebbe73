"""sa_gaussian science against independent oracles: closed-form and discrete-Lyapunov covariances, brute-force
autocovariance sums, scipy / POT distances, explicit bootstrap resampling, brute-force assignment, quadrature of the
Gibbs law, closed-form Stein factors and Gaussian distances under the explicit bound, and the verdicts on wrong
inputs. The platform contract is checked by tests/test_paper_contract.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import ot
import pyarrow as pa
import pytest
import torch
import yaml
from scipy import integrate, optimize
from scipy.linalg import sqrtm
from scipy.stats import norm, wasserstein_distance

from paperdag.common.plans import SamplePlan
from paperdag.common.stats import Interval
from paperdag.common.verdicts import resolve
from paperdag.errors import ParamsError
from paperdag.params import load_params, read_params_file
from paperdag.io import read_json, read_table
from paperdag.papers.sa_gaussian.bound import (constants, content_threshold, evaluate_bound, field_constants,
                                               moment_bounds, noise_moments, stein_factors)
from paperdag.papers.sa_gaussian.claims import Bounded, Measured, claims
from paperdag.papers.sa_gaussian import distance
from paperdag.papers.sa_gaussian.analysis import checks
from paperdag.papers.sa_gaussian.distance import best_scale, bootstrap_w1, directions, resample_counts, w1
from paperdag.papers.sa_gaussian.dynamics import Noise, simulate
from paperdag.papers.sa_gaussian.gibbs import gibbs_second_moment, sample_gibbs
from paperdag.papers.sa_gaussian.markov import long_run_covariance, stationary_law
from paperdag.papers.sa_gaussian.params import ClaimParams, Params, Plans, ProblemParams
from paperdag.papers.sa_gaussian.problems import (Problem, build_problems, contraction_fixed_point, limit_covariance,
                                                  logcosh_root, rotation, stepsize_covariance)
from paperdag.papers.sa_gaussian.rates import TwoTerm, crossover, loglog_rate, two_term
from paperdag.papers.sa_gaussian.stationarity import covariance_error, covariance_interval, drift_interval, moment_se
from paperdag.papers.sa_gaussian.summary import (RUNGS, bound_ratio_rate, gaussian_w1, limit_gap, moment_matched,
                                                 ratio_interval, tail_decay, tail_intervals, window_edge)
from paperdag.papers.sa_gaussian.tails import tail_table
from paperdag.papers.sa_gaussian.transport import Grid, binned_w1, exact_w1, group_w1
from paperdag.papers.sa_gaussian.verify import DISTANCES_FILE

SLUG = "sa_gaussian"
SECTION = yaml.safe_load((Path(__file__).parents[2] / "params.yaml").read_text())[SLUG]
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


def _numpy_w1(a: np.ndarray, b: np.ndarray, proj: np.ndarray) -> float:
    """Oracle: the numpy implementation of distance.w1 (before the torch port, 4ad767e)."""
    return float(np.abs(np.sort(a @ proj, axis=0) - np.sort(b @ proj, axis=0)).mean())


def _numpy_bootstrap_w1(a: np.ndarray, b: np.ndarray, proj: np.ndarray, reps: int,
                        rng: np.random.Generator) -> np.ndarray:
    """Oracle: the numpy implementation of distance.bootstrap_w1 (before the torch port, 4ad767e), transcribed."""
    n = len(a)
    z = np.concatenate([a @ proj, b @ proj]).T
    order = np.argsort(z, axis=1, kind="stable")
    gaps = np.diff(np.take_along_axis(z, order, axis=1), axis=1)
    order = order.astype(np.int32)
    out = np.empty(reps)
    for r in range(reps):
        ca = np.bincount(rng.integers(0, n, n), minlength=n)
        cb = np.bincount(rng.integers(0, n, n), minlength=n)
        running = np.concatenate([ca, -cb]).astype(np.int32)[order]
        np.cumsum(running, axis=1, out=running)
        out[r] = float(np.einsum("ij,ij->i", np.abs(running[:, :-1]), gaps).mean()) / n
    return out


@pytest.mark.parametrize("n,dim,count", [(20000, 1, 1), (8000, 2, 8), (501, 2, 3)])
def test_torch_distances_equal_the_numpy_implementation_draw_for_draw(n: int, dim: int, count: int) -> None:
    """The torch port (CPU) against the numpy version with the same rng: every replicate and the W1 agree to a
    relative 1e-12 (measured <= 2e-14 on the default's sizes: summation order only), and the rng is left in the same
    state (the draws after a bootstrap, e.g. the next stepsize's limit samples, are unchanged)."""
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, dim))
    b = rng.standard_normal((n, dim)) * 1.02 + 0.01
    a[: n // 10] = a[n // 10: 2 * (n // 10)]  # ties inside a sample and (below) across the two
    b[:5] = a[:5]
    proj = directions(dim, count)
    r_torch, r_numpy = np.random.default_rng(9), np.random.default_rng(9)
    got, ref = bootstrap_w1(a, b, proj, 6, r_torch), _numpy_bootstrap_w1(a, b, proj, 6, r_numpy)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=0)
    assert r_torch.integers(2**62) == r_numpy.integers(2**62)
    assert abs(w1(a, b, proj) - _numpy_w1(a, b, proj)) <= 1e-12 * _numpy_w1(a, b, proj)


def test_device_draw_branch_equals_explicit_resampling(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CUDA branch's draws (a torch generator instead of the numpy rng), run on the CPU: the replicates equal the
    brute-force W1 of the samples resampled with the same generator's indices."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((400, 2)), rng.standard_normal((400, 2)) + 0.05
    proj = directions(2, 4)
    monkeypatch.setattr(distance, "resample_generator", lambda rng, device: torch.Generator().manual_seed(11))
    got = distance.bootstrap_w1(a, b, proj, 3, rng)
    gen, ref = torch.Generator().manual_seed(11), []
    for _ in range(3):
        ia, ib = (torch.randint(0, 400, (400,), generator=gen).numpy() for _ in range(2))
        ref.append(_numpy_w1(a[ia], b[ib], proj))
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    counts = resample_counts(400, rng, torch.Generator().manual_seed(5), "cpu")
    assert counts.dtype == torch.int32 and int(counts.sum()) == 400 and len(counts) == 400


def test_variance_bootstrap_equals_explicit_resampling() -> None:
    """checks' tr Cov replicates from the resample's multiplicities equal the variance of y[rng.integers(0, n, n)]
    (the numpy implementation's draws) to a relative 1e-12."""
    pr = build_problems(ProblemParams(**SECTION["problems"]))["linear_gaussian"]
    rng = np.random.default_rng(4)
    y = rng.standard_normal((5000, 2)) @ np.array([[1.0, 0.3], [0.0, 0.6]])
    got = checks(pr, 0.05, y, 1.0, 1.0, 10, 5, np.random.default_rng(8))["var_x_boot"]
    r = np.random.default_rng(8)
    ref = [float(y[r.integers(0, 5000, 5000)].var(0, ddof=1).sum()) * 0.05 for _ in range(5)]
    np.testing.assert_allclose(got, ref, rtol=1e-12)


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


def test_rate_fit_recovers_slopes() -> None:
    alphas = np.array([0.1, 0.05, 0.025, 0.0125, 0.00625])
    floors = np.full(5, 1e-4)
    rng = np.random.default_rng(5)
    vals = 0.3 * alphas**0.5
    boots = vals[:, None] * np.exp(0.02 * rng.standard_normal((5, 40)))
    r = loglog_rate(alphas, vals, boots, floors, 3.0)
    assert r.lo < 0.5 < r.hi and r.hi - r.lo < 0.1 and r.n == 5
    assert r.method == "fit" and r.unit == "stepsize" and abs(r.span - np.log(16)) < 1e-12
    assert loglog_rate(alphas, vals, boots, np.full(5, 1.0), 3.0).n == 0  # everything below the floor


def _boots(vals: np.ndarray, rel: float, seed: int, reps: int = 40) -> np.ndarray:
    return vals[:, None] * (1 + rel * np.random.default_rng(seed).standard_normal((vals.size, reps)))


def test_two_term_recovers_coefficients_on_its_declared_window() -> None:
    """On c_h a^(1/2) + c_1 a the fit returns (c_h, c_1), the crossover (c_h / c_1)^2 and the lead c_h - a_min^(1/2)
    c_1 on every stepsize; with an a^2 term that bends the largest stepsizes the window stays every usable stepsize
    (the lack-of-fit test does not pick it) and the misfit widens c_h's interval instead; stepsizes at the floor leave
    the window, and fewer than min_points usable ones give no fit; c_h ~ 0 on c_1 a alone."""
    alphas = 0.1 * 2.0 ** -np.arange(6)
    floors = np.full(6, 1e-7)
    vals = 0.1 * np.sqrt(alphas) + 0.8 * alphas
    t = two_term(alphas, vals, _boots(vals, 0.005, 1), floors, 3.0, 5)
    assert t.points == 6 and abs(t.c_half.mean - 0.1) < 1e-12 and abs(t.c_one.mean - 0.8) < 1e-12
    assert abs(t.crossover - (0.1 / 0.8) ** 2) < 1e-12 and t.c_half.lo < 0.1 < t.c_half.hi
    assert abs(t.lead.mean - (0.1 - np.sqrt(alphas[-1]) * 0.8)) < 1e-12 and t.lead.n == 6
    np.testing.assert_allclose(t(alphas), vals, rtol=1e-12)
    bent = vals + 5.0 * alphas**2
    tb = two_term(alphas, bent, _boots(bent, 0.01, 2), floors, 3.0, 5)
    assert tb.points == 6 and tb.p_value < 0.05 and tb.birge > 1  # kept whole, its misfit reported and paid for
    at_floor = two_term(alphas, vals, _boots(vals, 0.005, 1), np.r_[floors[:5], 1.0], 3.0, 5)
    assert at_floor.alphas == tuple(alphas[:5])
    lin = 0.5 * alphas
    tl = two_term(alphas, lin, _boots(lin, 0.005, 3), floors, 3.0, 5)
    assert tl.c_half.lo < 0 < tl.c_half.hi and abs(tl.c_half.mean) < 1e-10
    assert two_term(alphas, vals, _boots(vals, 0.005, 1), np.r_[floors[:4], 1.0, 1.0], 3.0, 5) is None
    assert crossover(0.1, -0.2) == np.inf and np.isnan(crossover(-0.1, 0.2))


def test_lead_interval_is_the_refits_linear_combination() -> None:
    """The lead's interval is lead +- 1.96 sd of (c_h - a_min^(1/2) c_1) over the weighted refits (numpy oracle)."""
    alphas = 0.1 * 2.0 ** -np.arange(5)
    vals = 0.2 * np.sqrt(alphas) + 0.3 * alphas
    boots = _boots(vals, 0.01, 9, reps=30)
    t = two_term(alphas, vals, boots, np.full(5, 1e-7), 3.0, 5)
    sd = boots.std(1, ddof=1)
    X = np.column_stack([np.sqrt(alphas), alphas]) / sd[:, None]
    refits = np.array([np.linalg.lstsq(X, boots[:, r] / sd, rcond=None)[0] for r in range(30)])
    lead = refits[:, 0] - np.sqrt(alphas[-1]) * refits[:, 1]
    assert t.lead.hi - t.lead.mean == pytest.approx(1.96 * lead.std(ddof=1) * t.birge, rel=1e-10)


def test_two_term_intervals_are_bootstrap_refits() -> None:
    """The CI of c_h is c_h +- 1.96 sd of the weighted refits on the replicate columns (numpy lstsq oracle)."""
    alphas = np.array([0.04, 0.02, 0.01, 0.005])
    vals = 0.2 * np.sqrt(alphas) + 0.3 * alphas
    boots = _boots(vals, 0.01, 4, reps=25)
    t = two_term(alphas, vals, boots, np.full(4, 1e-7), 3.0, 3)
    sd = boots.std(1, ddof=1)
    X = np.column_stack([np.sqrt(alphas), alphas]) / sd[:, None]
    refits = np.array([np.linalg.lstsq(X, boots[:, r] / sd, rcond=None)[0][0] for r in range(25)])
    assert abs(t.c_half.hi - t.c_half.mean - 1.96 * refits.std(ddof=1) * t.birge) < 1e-12 and t.points == 4
    assert t.c_half.method == "fit" and t.c_half.n == 4 and abs(t.c_half.span - (0.2 - np.sqrt(0.005))) < 1e-12


def test_lack_of_fit_widens_the_two_term_intervals_by_the_birge_ratio() -> None:
    """A window the lack-of-fit test rejects keeps its fit, its intervals widened by sqrt(chi^2 / dof) > 1; a fitting
    window is not widened (chi^2 / dof < 1 leaves the factor at 1)."""
    alphas = 0.1 * 2.0 ** -np.arange(5)
    bent = 0.1 * np.sqrt(alphas) + 0.8 * alphas + 5.0 * alphas**2
    boots = _boots(bent, 0.01, 6)
    t = two_term(alphas, bent, boots, np.full(5, 1e-7), 3.0, 5)
    assert t.p_value < 0.05 and t.birge == pytest.approx(np.sqrt(t.chi2 / 3)) and t.birge > 1
    sd = boots.std(1, ddof=1)
    X = np.column_stack([np.sqrt(alphas), alphas]) / sd[:, None]
    refits = np.array([np.linalg.lstsq(X, boots[:, r] / sd, rcond=None)[0][0] for r in range(boots.shape[1])])
    assert t.c_half.hi - t.c_half.mean == pytest.approx(1.96 * refits.std(ddof=1) * t.birge, rel=1e-10)


def test_drift_and_covariance_intervals_against_monte_carlo() -> None:
    """The drift's standard error sqrt(2) se matches the spread of the moment difference of independent chain
    batches; the covariance error of a resample (multinomial counts) equals np.cov on the resampled rows, and the
    bootstrap interval brackets the error it is built around."""
    rng = np.random.default_rng(8)
    L = np.array([[1.0, 0.0], [0.4, 0.6]])
    se = moment_se(rng.standard_normal((20000, 2)) @ L.T)
    diffs = []
    for _ in range(400):
        a, b = (rng.standard_normal((20000, 2)) @ L.T for _ in range(2))
        m_a, m_b = (np.einsum("ij,ij->i", x, x).mean() for x in (a, b))
        diffs.append((m_a - m_b) / m_a)
    assert np.std(diffs) == pytest.approx(np.sqrt(2) * se, rel=0.1)
    d = drift_interval(0.01, se, 20000)
    assert d.hi - d.mean == pytest.approx(1.96 * np.sqrt(2) * se) and d.n == 20 and d.unit == "kilochain"
    y = rng.standard_normal((5000, 2)) @ L.T
    idx = rng.integers(0, 5000, 5000)
    exact = L @ L.T
    counts = np.bincount(idx, minlength=5000)
    assert covariance_error(y, exact, counts) == pytest.approx(
        np.linalg.norm(np.cov(y[idx].T) - exact) / np.linalg.norm(exact), rel=1e-10)
    e = covariance_interval(y, exact, 40, rng)
    assert e.lo < covariance_error(y, exact) < e.hi and e.unit == "kilochain" and e.n == 5


def _quadratic(noise: str = "gaussian", a: float = 8.0, sigma: float = 1.0) -> Problem:
    return Problem("q", "quadratic", noise, [0.0], [[a]], [[sigma**2]], [[sigma**2]], [[sigma**2 / (2 * a)]], a,
                   {"a": a, "sigma": sigma})


def test_stein_factors_match_the_1d_closed_forms_from_above() -> None:
    """1-D OU (A = a, Gamma = sigma^2): |f'| <= 1/a and |f''| <= 2 / (sigma (pi a)^(1/2)) for 1-Lipschitz h (the
    classical sqrt(2/pi) factor at a = 1, sigma^2 = 2); the quadrature is an upper bound within 1%."""
    for a, sigma in ((8.0, 1.0), (1.0, np.sqrt(2.0)), (3.0, 0.5)):
        k1, k2, heads, tails = stein_factors(np.array([[a]]), np.array([[sigma**2]]), np.array([[sigma**2 / (2 * a)]]))
        assert 1 / a <= k1 < 1.01 / a
        closed = 2 / (sigma * np.sqrt(np.pi * a))
        assert closed <= k2 < 1.01 * closed
        assert (np.diff(heads) >= 0).all() and (np.diff(tails) <= 0).all()


def _bures(s1: np.ndarray, s2: np.ndarray) -> float:
    """W2 between centred Gaussians: (tr s1 + tr s2 - 2 tr (s1^(1/2) s2 s1^(1/2))^(1/2))^(1/2) >= W1."""
    r = sqrtm(s1)
    return float(np.sqrt(max(np.trace(s1) + np.trace(s2) - 2 * np.trace(sqrtm(r @ s2 @ r)).real, 0.0)))


def test_explicit_bound_dominates_exact_gaussian_distances_and_moments() -> None:
    """Linear field with Gaussian noise: y ~ N(0, S_alpha) exactly, so W1 <= W2 (closed form) must lie under the
    bound at every stepsize up to the stability condition, and the moment bounds above tr S_alpha and
    E|y|^4 = (tr S)^2 + 2 tr S^2; the bound decays
    like alpha^(1/2) log(1/alpha) (its ratio over a factor 100 in alpha is below 100^(1/2))."""
    for pr in (_quadratic(), _linear()):
        c = constants(pr)
        A, G, S = (np.atleast_2d(np.array(m)) for m in (pr.jacobian, pr.noise_cov, pr.sigma))
        limit = 2 * c.mu / c.lipschitz**2
        for alpha in limit * np.array([0.95, 0.5, 0.1, 0.01, 0.001]):
            b, Sa = evaluate_bound(c, alpha), stepsize_covariance(A, G, alpha)
            assert _bures(Sa, S) <= b.value and np.trace(Sa) <= b.second_moment * (1 + 1e-12)
            assert np.trace(Sa) ** 2 + 2 * np.trace(Sa @ Sa) <= moment_bounds(c, alpha)[1]
        assert np.isnan(evaluate_bound(c, 1.01 * limit).value)
        small, smaller = evaluate_bound(c, 1e-3).value, evaluate_bound(c, 1e-5).value
        assert 100**0.35 < small / smaller < 10  # slower than alpha^(1/2) by the log factor, faster than alpha^0.35


def test_field_constants_bound_sampled_jacobians_and_noise_moments_match_monte_carlo() -> None:
    """Nonlinear field: mu <= lambda_min(sym Dg(x)), |Dg(x)| <= L and |D^2 g| by finite differences <= M2 at
    random x; logcosh likewise; the noise moments equal Monte-Carlo averages (E|w|^3 bounded above)."""
    P = build_problems(ProblemParams(**SECTION["problems"]))
    rng = np.random.default_rng(8)
    nl = P["nonlinear_gaussian"]
    mu, L, M2 = field_constants(nl)
    c = nl.coef
    R = np.array(c["R"])

    def jac(x: np.ndarray) -> np.ndarray:
        return c["kappa"] * (np.eye(2) - c["gamma"] * R @ np.diag(1 / np.cosh(x) ** 2))

    for x in rng.normal(0, 2, (500, 2)):
        J = jac(x)
        assert np.linalg.eigvalsh((J + J.T) / 2).min() >= mu - 1e-12 and np.linalg.norm(J, 2) <= L + 1e-12
        u = rng.standard_normal(2)
        u /= np.linalg.norm(u)
        assert np.linalg.norm((jac(x + 1e-6 * u) - jac(x - 1e-6 * u)) / 2e-6, 2) <= M2 + 1e-5
    lc = P["sgd_logcosh_gaussian"]
    mu, L, M2 = field_constants(lc)
    z = np.linspace(-8, 8, 100_001) - lc.coef["c"]
    d1 = lc.coef["a"] + lc.coef["b"] / np.cosh(z) ** 2
    d2 = np.gradient(d1, z)
    assert mu <= d1.min() and d1.max() <= L and np.abs(d2).max() <= M2 < 1.001 * np.abs(d2).max()
    for pr in (P["linear_skewed"], P["linear_gaussian"], P["sgd_quadratic_skewed"]):
        w = Noise(pr, 400_000, _gen(9), "cpu")().numpy()
        r = np.linalg.norm(w, axis=1)
        s2, s3, s4 = noise_moments(pr)
        assert abs((r**2).mean() / s2 - 1) < 0.01 and abs((r**4).mean() / s4 - 1) < 0.05 and (r**3).mean() <= s3


def test_fourth_moment_bound_dominates_skewed_and_nonlinear_simulations() -> None:
    """E|y|^2 and E|y|^4 of simulated steady states (skewed noise, contractive field) lie under the drift bounds up
    to 3 Monte-Carlo standard errors (the E|y|^2 bound is exact for the quadratic)."""
    P = build_problems(ProblemParams(**SECTION["problems"]))
    for name, alpha in (("linear_skewed", 0.05), ("sgd_quadratic_skewed", 0.1), ("nonlinear_gaussian", 0.05)):
        y = simulate(P[name], alpha, 20_000, 12.0, 1.0, _gen(11), "cpu").y.numpy()
        y2, y4 = moment_bounds(constants(P[name]), alpha)
        for power, bound in ((1, y2), (2, y4)):
            v = (y**2).sum(1) ** power
            assert v.mean() - 3 * v.std() / np.sqrt(v.size) <= bound, (name, power)


def test_content_threshold_is_where_the_bound_drops_below_the_trivial_one() -> None:
    c = constants(_linear())
    a = content_threshold(c, 0.1)
    assert evaluate_bound(c, a).has_content and not evaluate_bound(c, 2 * a).has_content


def test_exact_w1_equals_scipy_in_1d_and_brute_force_assignment_in_2d() -> None:
    """POT's LP against scipy's 1-D W1 and an exhaustive optimal assignment (scipy linear_sum_assignment); the sliced
    W1 never exceeds it; the group estimate of W1 between equal laws sits at its floor."""
    rng = np.random.default_rng(10)
    a, b = rng.standard_normal((300, 1)), rng.exponential(size=(300, 1))
    assert abs(exact_w1(a, b) - wasserstein_distance(a[:, 0], b[:, 0])) < 1e-10
    a2, b2 = rng.standard_normal((120, 2)), rng.standard_normal((120, 2)) * [1.0, 2.0] + 0.3
    cost = np.linalg.norm(a2[:, None] - b2[None], axis=2)
    rows, cols = optimize.linear_sum_assignment(cost)
    assert abs(exact_w1(a2, b2) - cost[rows, cols].mean()) < 1e-10
    assert w1(a2, b2, directions(2, 8)) <= exact_w1(a2, b2)
    y = rng.standard_normal((5000, 2))
    w, floor, m = group_w1(y, lambda k: rng.standard_normal((k, 2)), 2000, 6, Grid(np.eye(2), 24, 4.0), rng)
    assert m == 5000 // 6 and w.n == floor.n == 6 and w.unit == "subsample"
    assert floor.lo < w.mean < floor.hi or w.lo < floor.mean < w.hi


def _centroid_radius(x: np.ndarray, grid: Grid) -> float:
    """The mean distance of the points to their own cell's centroid (cells from the grid's definition, grouped with
    np.unique), which bounds W1(mu, Q mu) (the coupling x -> its centroid)."""
    z = x @ grid.whiten.T
    idx = np.clip(np.floor((z + grid.span) / (2 * grid.span) * grid.bins), 0, grid.bins - 1)
    _, inv = np.unique(idx, axis=0, return_inverse=True)
    inv = inv.ravel()
    centroid = np.stack([np.bincount(inv, weights=x[:, j]) / np.bincount(inv) for j in range(2)], 1)
    return float(np.linalg.norm(x - centroid[inv], axis=1).mean())


def test_binned_w1_is_the_exact_lp_when_cells_are_singletons_and_near_closed_forms_otherwise() -> None:
    """Quantized exact W1 (transport.binned_w1) against three oracles: (i) when every point has a cell of its own the
    quantization is the identity, so it equals the raw LP (brute-force assignment); (ii) on a deterministic
    product-quantile quantization of N(0, S) with the default group's size (224^2 ~ 5e4 points), a translation by d
    (W1 = d exactly) and a rescaling by s about 0 (W1 = (s - 1) mean |x| exactly: the potential |x| and the map
    x -> s x meet) stay within the worst-case bound W1(mu, Q mu) + W1(nu, Q nu) (centroid radii), and at the default
    grid within 0.4x the floor of two 5e4-draws of N(0, S) (quantization costs less than sampling at this size);
    (iii) the grid whitens by the limit covariance."""
    rng = np.random.default_rng(11)
    grid = Grid(np.eye(2), 64, 4.0)
    centres = (np.arange(64) + 0.5) / 64 * 8.0 - 4.0
    cells = np.stack(np.meshgrid(centres, centres), -1).reshape(-1, 2)
    a, b = cells[rng.choice(len(cells), 150, replace=False)], cells[rng.choice(len(cells), 150, replace=False)]
    cost = np.linalg.norm(a[:, None] - b[None], axis=2)
    rows, cols = optimize.linear_sum_assignment(cost)
    assert binned_w1(a, b, grid) == pytest.approx(cost[rows, cols].mean(), abs=1e-10) == exact_w1(a, b)
    sigma = np.array([[0.3, 0.1], [0.1, 0.2]])
    chol = np.linalg.cholesky(sigma)
    grid = Grid.for_limit(sigma, SECTION["transport"]["bins"], SECTION["transport"]["span"])
    assert grid.whiten @ sigma @ grid.whiten.T == pytest.approx(np.eye(2))
    q = norm.ppf((np.arange(224) + 0.5) / 224)
    x = np.stack(np.meshgrid(q, q), -1).reshape(-1, 2) @ chol.T
    floor = binned_w1(rng.standard_normal((len(x), 2)) @ chol.T, rng.standard_normal((len(x), 2)) @ chol.T, grid)
    assert 0.01 < floor < 0.02
    shifts = ((x + [0.05, 0.0], 0.05), (x + [0.0, 0.01], 0.01))
    for y, true in (*shifts, (1.1 * x, 0.1 * np.linalg.norm(x, axis=1).mean())):
        v = binned_w1(x, y, grid)
        assert abs(v - true) <= _centroid_radius(x, grid) + _centroid_radius(y, grid)
        assert -0.1 * floor < v - true < 0.4 * floor


def test_moment_matched_rung_is_scipys_w1_to_the_second_moment_gaussian() -> None:
    """The moment-matched rung: W1 (scipy) of y to sqrt(E y^2) z for the first draw z of the generator, and its
    bootstrap replicates from the same generator afterwards; a Gibbs (x^4) sample is farther from it than a Gaussian
    sample of the same second moment."""
    rng = np.random.default_rng(9)
    gibbs = sample_gibbs(rng, 50_000, 1.0)[:, None]
    gauss = np.sqrt(np.mean(gibbs**2)) * rng.standard_normal((50_000, 1))
    rows = moment_matched([gibbs, gauss], 6, np.random.default_rng(3))
    again = np.random.default_rng(3)
    z = np.sqrt(np.mean(gibbs**2)) * again.standard_normal(gibbs.shape)
    assert rows["w1"][0] == pytest.approx(wasserstein_distance(gibbs[:, 0], z[:, 0]), rel=1e-10)
    assert rows["boot"].shape == (2, 6) and rows["w1"][0] > 3 * rows["w1"][1]


def test_gaussian_w1_is_the_1d_closed_form() -> None:
    s1, s2 = np.array([[2.0]]), np.array([[0.5]])
    assert abs(gaussian_w1(s1, s2, directions(1, 1)) - np.sqrt(2 / np.pi) * (np.sqrt(2.0) - np.sqrt(0.5))) < 1e-14


NAMES = ["sgd_quadratic_gaussian", "sgd_quadratic_skewed", "sgd_logcosh_gaussian", "linear_gaussian", "linear_skewed",
         "linear_markov", "nonlinear_gaussian"]
HALF = ["sgd_quadratic_skewed", "linear_skewed", "sgd_logcosh_gaussian", "nonlinear_gaussian", "linear_markov"]
LINEAR = ["sgd_quadratic_gaussian", "linear_gaussian"]
IID = [s for s in NAMES if s != "linear_markov"]
PARAMS = ClaimParams(slope_tol=0.2, baseline_ratio=3.0, stationarity_tol=0.02, ratio_slope_margin=0.1,
                     tail_low=[1.0, 2.0], tail_high=[3.0, 4.0])
ONE_D = ["sgd_quadratic_gaussian", "sgd_quadratic_skewed", "sgd_logcosh_gaussian"]
CHAINS = {s: "chains_1d" if s.startswith("sgd") else "chains_2d" for s in NAMES} | {
    "quartic_rademacher": "chains_quartic"}


def _plan(unit: str, n: int) -> SamplePlan:
    return SamplePlan(unit=unit, n=n, basis="design", effect=None, power=None, pilot_n=0, pilot_sd=None, looks=1,
                      spending="none", why="the test's design size")


PLANS = Plans(chains_1d=_plan("kilochain", 100), chains_2d=_plan("kilochain", 100),
              chains_quartic=_plan("kilochain", 100), probe_chains=_plan("kilochain", 100),
              subsamples=_plan("subsample", 8), stepsizes=_plan("stepsize", 5), stepsizes_1d=_plan("stepsize", 7),
              quartic_stepsizes=_plan("stepsize", 5), floor_draws=_plan("draw", 5))


def _ci(mean: float, lo: float, hi: float, unit: str = "kilochain", n: int = 100) -> Interval:
    return Interval(mean, lo, hi, n, 0.95, unit, "bootstrap")


def _rate(mean: float, lo: float, hi: float, n: int = 5) -> Interval:
    return Interval(mean, lo, hi, n, 0.95, "stepsize", "fit", df=19.0, span=1.4)


WINDOW = (0.1, 0.05, 0.025, 0.0125, 0.00625)


def _fit(c_half: Interval, lead: Interval | None = None) -> TwoTerm:
    """A two-term fit on WINDOW with c_1 = 0.5 and the lead c_h - a_min^(1/2) c_1 (given, or from the means)."""
    shift = np.sqrt(WINDOW[-1]) * 0.5
    lead = lead or _rate(c_half.mean - shift, c_half.lo - shift, c_half.hi - shift, 5)
    return TwoTerm(c_half, _rate(0.5, 0.4, 0.6, 5), lead, crossover(c_half.mean, 0.5), WINDOW, 3.0, 0.4)


def _bounded(w1: float, bound: float = 0.3, trivial: float = 0.4) -> list[Bounded]:
    return [Bounded(0.01, _ci(w1, 0.9 * w1, 1.1 * w1), bound, trivial, (0.0, 0.1, bound - 0.1))]


def _window(w: Interval) -> list[tuple[float, Interval, float]]:
    return [(a, w, 0.01) for a in WINDOW]


def _measured(**change) -> Measured:
    """Measurements in the regime (every precondition holds) where every evidence claim holds, with ``change``."""
    ok = _ci(0.05, 0.04, 0.06)
    steady = _ci(0.001, 0.0, 0.002)
    base = dict(chains=CHAINS, rates={s: _rate(0.7, 0.65, 0.75) for s in [*NAMES, "quartic_rademacher"]},
                two_term={s: _fit(_rate(0.15, 0.1, 0.2, 5)) for s in HALF}, window={s: _window(ok) for s in HALF},
                local={s: _rate(1.0, 0.95, 1.05, 3) for s in LINEAR}, exact_local={s: 1.05 for s in LINEAR},
                smallest_w1={s: ok for s in NAMES}, resolution={s: 0.01 for s in NAMES},
                resolved_alpha={s: 0.00625 for s in NAMES},
                bounds={s: _bounded(0.02) for s in IID}, content_from={s: 0.01 for s in IID},
                sliced_vs_exact={"linear_gaussian": [(0.1, 0.05, 0.01, _ci(0.08, 0.07, 0.09, "subsample", 8), 0.06),
                                                     (0.05, 0.03, 0.01, _ci(0.05, 0.04, 0.06, "subsample", 8), 0.06)]},
                bound_ratio={s: _rate(0.3, 0.2, 0.4, 5) for s in ONE_D},
                tail_decay={s: {"t=1 vs t=3": ok, "t=2 vs t=4": ok} for s in NAMES},
                tail_largest={s: ok for s in NAMES}, tail_gap={s: ok for s in NAMES},
                markov_ratio=_ci(6.0, 5.0, 7.0), markov_w1=(0.02, 0.12),
                markov_limit_gap=(0.1, _ci(0.01, 0.008, 0.012, "draw", 5)),
                quartic_shrink=ok, quartic_end=(_ci(0.003, 0.002, 0.004), 0.006),
                quartic_rungs={RUNGS["best_gaussian"]: 0.05, RUNGS["moment_matched"]: 0.06},
                quartic_gain={RUNGS["best_gaussian"]: [ok, ok], RUNGS["moment_matched"]: [ok, ok]},
                quartic_best_ratio=_ci(10.0, 8.0, 12.0), quartic_best_resolved=(ok, 0.006),
                quartic_var_rate=_rate(0.5, 0.49, 0.51), drift={f"{s} alpha=0.1": steady for s in CHAINS},
                probe_drift={"linear_gaussian alpha=0.01": steady}, cov_error={"linear_gaussian alpha=0.1": steady})
    return Measured(**(base | change))


def _claims(m: Measured) -> list:
    return resolve(claims(m, 3.0, PARAMS, 5, PLANS))


def _verdicts(m: Measured) -> dict[str, str]:
    return {c.id: c.verdict for c in _claims(m)}


def test_claims_hold_in_the_regime() -> None:
    assert set(_verdicts(_measured()).values()) == {"holds"}


def test_claims_fail_on_wrong_measurements() -> None:
    """No alpha^(1/2) term (c_h < 0, whatever the lead), wrong slopes, a W1 / bound ratio that grows as alpha falls,
    ratios and tails that do not decay make every evidence claim fail (not inconclusive); a W1 above the bound, a
    slope <= 0 and a sliced W1 above the exact one (both above their floors) fail the checks."""
    bad = _rate(-0.2, -0.3, -0.1)  # W1 grows as alpha -> 0
    wrong = _measured(rates={s: bad for s in [*NAMES, "quartic_rademacher"]}, local={s: bad for s in LINEAR},
                      two_term={s: _fit(_rate(-0.05, -0.08, -0.02, 5)) for s in HALF},
                      bounds={s: _bounded(0.35) for s in IID}, bound_ratio={s: _rate(-0.5, -0.6, -0.4) for s in ONE_D},
                      tail_gap={s: _ci(-0.05, -0.06, -0.04) for s in NAMES},
                      tail_decay={s: {"t=1 vs t=3": _ci(-0.05, -0.06, -0.04)} for s in NAMES},
                      markov_ratio=_ci(0.8, 0.7, 0.9), quartic_shrink=_ci(-0.01, -0.02, -0.005),
                      quartic_best_ratio=_ci(0.8, 0.7, 0.9), quartic_var_rate=_rate(1.0, 0.95, 1.05),
                      sliced_vs_exact={"linear_gaussian": [
                          (0.1, 0.1, 0.01, _ci(0.08, 0.07, 0.09, "subsample", 8), 0.06),
                          (0.05, 0.05, 0.01, _ci(0.08, 0.07, 0.09, "subsample", 8), 0.06)]})
    verdicts = {c.id: (c.kind, c.verdict) for c in _claims(wrong)}
    assert {v for k, v in verdicts.values() if k == "evidence"} == {"fails"}, verdicts
    for cid in ("w1_within_explicit_bound", "w1_vanishes", "sliced_below_exact_w1"):
        assert verdicts[cid] == ("check", "fails"), cid


def test_claims_carry_units_plans_and_the_quartic_ladder() -> None:
    """Every interval-judged claim names its unit and plan (1-D fits the 1-D sweep's); the rate claims give alpha_c
    beside their window; the x^4 competence is judged against the strongest Gaussian of its ladder with the next
    rung beside it, whichever of the two is stronger."""
    rows = {c.id: c.row() for c in claims(_measured(), 3.0, PARAMS, 5, PLANS)}
    assert rows["w1_resolved_linear_gaussian"]["unit"] == "kilochain"
    assert rows["w1_rate_gaussian_linear"]["unit"] == "stepsize"
    assert rows["w1_to_bound_ratio_falls"]["plan"]["planned_n"] == 7
    assert rows["markov_limits_differ"]["unit"] == "draw"
    fit = rows["w1_rate_markov_noise"]["measured"]["linear_markov"]
    assert fit["crossover_alpha"] == pytest.approx(0.09) and fit["window"] == list(WINDOW)
    assert rows["w1_within_explicit_bound"]["kind"] == rows["w1_vanishes"]["kind"] == "check"
    quartic = rows["quartic_gibbs_beats_fitted_gaussian"]
    assert quartic["baseline"] == RUNGS["best_gaussian"] and len(quartic["ladder"]) == 2
    swapped = _measured(quartic_rungs={RUNGS["best_gaussian"]: 0.07, RUNGS["moment_matched"]: 0.06},
                        quartic_gain={RUNGS["best_gaussian"]: [_ci(0.05, 0.04, 0.06)] * 2,
                                      RUNGS["moment_matched"]: [_ci(-0.01, -0.02, -0.005), _ci(0.05, 0.04, 0.06)]})
    row = next(c.row() for c in claims(swapped, 3.0, PARAMS, 5, PLANS) if c.id == "quartic_gibbs_beats_fitted_gaussian")
    assert row["baseline"] == RUNGS["moment_matched"] and row["verdict"] == "fails"


def test_unresolved_or_outside_the_regime_is_inconclusive() -> None:
    """An unresolved window point, no two-term fit, a c_h > 0 whose term does not lead in the window, a window the
    closed form shows is pre-asymptotic, a W1 at the MC floor or an unsteady chain make the claims they gate
    inconclusive; a bound without content anywhere or unsteady probes leave the bound check inconclusive (and no
    evidence); the sliced check judges only pairs above both floors."""
    base = _measured()
    v = _verdicts(_measured(window={**base.window, "nonlinear_gaussian": _window(_ci(0.012, 0.008, 0.016))}))
    assert v["two_term_fits_nonlinear_gaussian"] == "inconclusive" and v["w1_rate_nonlinear_drift"] == "inconclusive"
    assert v["w1_rate_skewed_noise"] == "holds"
    v = _verdicts(_measured(two_term={**base.two_term, "linear_markov": None}))
    assert v["two_term_fits_linear_markov"] == v["w1_rate_markov_noise"] == "inconclusive"
    trailing = _fit(_rate(0.15, 0.1, 0.2, 5), lead=_rate(-0.02, -0.05, 0.01, 5))  # c_h > 0, alpha_c ~ a_min
    claim = next(c for c in _claims(_measured(two_term={**base.two_term, "sgd_logcosh_gaussian": trailing}))
                 if c.id == "w1_rate_nonlinear_drift")
    assert claim.verdict == "inconclusive" and "sqrt(alpha) not leading" in claim.reason and claim.cause == "range"
    behind = _fit(_rate(0.15, 0.1, 0.2, 5), lead=_rate(-0.1, -0.15, -0.05, 5))  # alpha_c below the window
    assert _verdicts(_measured(two_term={**base.two_term, "linear_markov": behind}))["w1_rate_markov_noise"] \
        == "inconclusive"
    v = _verdicts(_measured(bounds={s: _bounded(0.35, bound=0.5) for s in IID}))
    assert v["w1_within_explicit_bound"] == "inconclusive" and v["w1_to_bound_ratio_falls"] == "holds"
    some = {s: _bounded(0.35, bound=0.5) for s in IID} | {"sgd_quadratic_gaussian": _bounded(0.02)}
    assert _verdicts(_measured(bounds=some))["w1_within_explicit_bound"] == "holds"
    loose = _verdicts(_measured(probe_drift={"linear_gaussian alpha=0.01": _ci(0.01, -0.01, 0.03)}))
    assert loose["w1_within_explicit_bound"] == "inconclusive" and loose["w1_rate_skewed_noise"] == "holds"
    straddle = _verdicts(_measured(bound_ratio={**base.bound_ratio, "sgd_logcosh_gaussian": _rate(-0.1, -0.2, 0.0)}))
    assert straddle["w1_to_bound_ratio_falls"] == "inconclusive"
    v = _verdicts(_measured(exact_local={**base.exact_local, "linear_gaussian": 1.3}))
    assert v["asymptotic_window_linear_gaussian"] == "fails" and v["w1_rate_gaussian_linear"] == "inconclusive"
    floor = _measured(smallest_w1={**base.smallest_w1, "linear_markov": _ci(0.012, 0.008, 0.016)},
                      resolution={s: 0.02 if s == "linear_markov" else 0.01 for s in NAMES})
    v = _verdicts(floor)
    assert v["w1_resolved_linear_markov"] == "fails" and v["w1_rate_markov_noise"] == "inconclusive"
    evidence = {c.id for c in claims(base, 3.0, PARAMS, 5, PLANS) if c.kind == "evidence"}
    unsteady = _verdicts(_measured(drift={**base.drift, "linear_gaussian alpha=0.1": _ci(0.5, 0.4, 0.6)}))
    assert unsteady["chains_reached_steady_state"] == "fails"
    assert {unsteady[k] for k in evidence} == {"inconclusive"}
    at_floor = [(0.1, 0.1, 0.01, _ci(0.08, 0.05, 0.11, "subsample", 8), 0.06),  # exact W1 at its floor
                (0.05, 0.005, 0.01, _ci(0.08, 0.07, 0.09, "subsample", 8), 0.06)]  # sliced W1 at its floor
    check = next(c for c in _claims(_measured(sliced_vs_exact={"linear_gaussian": at_floor}))
                 if c.id == "sliced_below_exact_w1")
    assert check.verdict == "inconclusive" and "floors" in check.reason


def test_tail_decay_and_bound_ratio_against_direct_computation() -> None:
    """The decay-in-t interval is err(t_lo) - err(t_hi) at the smallest stepsize +- 1.96 hypot(se); the W1 / bound
    slope is the log-log slope of the ratio over the usable stepsizes (numpy polyfit oracle), NaN below min_points."""
    t = pa.table({"alpha": [0.1] * 4 + [0.01] * 4, "t": [1.0, 2.0, 3.0, 4.0] * 2,
                  "empirical": [0.30, 0.05, 0.004, 0.0001, 0.31, 0.048, 0.0029, 0.00007],
                  "gaussian": [0.32, 0.046, 0.0027, 0.00006] * 2, "se": [0.001, 0.0005, 0.0001, 0.00001] * 2})
    d = tail_decay(t, 1_000_000, [1.0, 2.0], [3.0, 4.0])
    assert set(d) == {"t=1 vs t=3", "t=1 vs t=4", "t=2 vs t=3", "t=2 vs t=4"} and d["t=1 vs t=3"].n == 1000
    x = d["t=2 vs t=3"]
    assert abs(x.mean - (0.002 - 0.0002)) < 1e-12 and abs(x.hi - x.mean - 1.96 * np.hypot(0.0005, 0.0001)) < 1e-12
    pr = Problem("q", "quadratic", "gaussian", [0.0], [[8.0]], [[1.0]], [[1.0]], [[1 / 16]], 8.0,
                 {"a": 8.0, "sigma": 1.0})
    alphas = 0.1 * 2.0 ** -np.arange(6)
    w = 0.2 * alphas**0.8
    rows = {"alpha": alphas, "w1": w, "boot": _boots(w, 0.01, 11), "floor": np.r_[np.full(5, 1e-6), 1.0]}
    r = bound_ratio_rate(pr, rows, 3.0, 5)
    b = np.array([evaluate_bound(constants(pr), a).value for a in alphas[:5]])
    assert r.n == 5 and abs(r.mean - np.polyfit(np.log(alphas[:5]), np.log(w[:5] / b), 1)[0]) < 1e-10
    assert np.isnan(bound_ratio_rate(pr, rows, 3.0, 6).mean)


def test_window_edge_is_the_smallest_resolved_stepsize() -> None:
    """The resolution precondition looks at the window's smallest stepsize: the last W1 >= floor_ratio x floor (an
    O(alpha) W1 that sinks to its floor below the window leaves it there); the sweep's smallest when none is."""
    rows = {"w1": np.array([0.1, 0.05, 0.02, 0.004, 0.001]), "floor": np.full(5, 0.001)}
    assert window_edge(rows, 3.0) == 3 and window_edge(rows, 200.0) == 4


def test_every_profile_loads_and_the_gpu_profile_carries_the_regime_sizes() -> None:
    """default, smoke, replicate and gpu validate; gpu: 1e8 2-D chains (1e5 kilochains in its plan), exact W1 on every
    chain (its groups use them all, as the default's do), the 2-D sweep two octaves lower (7 stepsizes to 0.0016, as
    the 1-D one); replicate only reseeds."""
    path = Path(__file__).parents[2] / "params.yaml"
    load = {prof: load_params(read_params_file(path), SLUG, Params, prof, path)
            for prof in ("default", "smoke", "replicate", "gpu")}
    d, g = load["default"], load["gpu"]
    assert g.sim.chains_2d == 100_000_000 and g.plans.chains_2d.n == 100_000
    for p in (d, g):
        assert p.transport.subsample * p.transport.repeats == p.sim.chains_2d and p.transport.subsample >= 10_000
    assert g.sim.alphas == d.sim.alphas + [d.sim.alphas[-1] / 2, d.sim.alphas[-1] / 4] == g.sim.alphas_1d
    assert g.plans.stepsizes.n == 7 and g.sim.chains_1d == d.sim.chains_1d
    assert load["replicate"].seed != d.seed and load["replicate"].sim == d.sim
    assert d.fit.min_points >= 5 and len(d.sim.alphas_1d) == len(d.sim.alphas) + 2


def test_a_quartic_start_outside_its_invariant_interval_is_refused_and_one_inside_stays_bounded() -> None:
    """start_offset 1 at quartic alpha 0.2 (3 alpha R^2 = 0.6) validates and its chains stay in [-1, 1]; 2 (2.4 > 1)
    is refused with the reason, and from 4 > sqrt(2 / 0.2) the chain does diverge."""
    path = Path(__file__).parents[2] / "params.yaml"
    data = read_params_file(path)
    p = load_params(data, SLUG, Params, "default", path)
    quartic = build_problems(p.problems)["quartic_rademacher"]
    alpha = p.sim.quartic_alphas[0]
    assert np.abs(simulate(quartic, alpha, 1000, 2.0, 1.0, _gen(3), "cpu").y.numpy()).max() * alpha ** 0.25 <= 1.0
    data[SLUG]["sim"]["start_offset"] = 2.0
    with pytest.raises(ParamsError, match="3 alpha R"):
        load_params(data, SLUG, Params, "default", path)
    with np.errstate(all="ignore"):
        assert not np.isfinite(simulate(quartic, alpha, 1000, 2.0, 4.0, _gen(3), "cpu").y.numpy()).all()


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
    r = ratio_interval(2.0, a_boot, 1.0, b_boot, 400_000)
    assert r.unit == "kilochain" and r.n == 400
    sd = np.hypot(0.1 / 2.0, 0.05 / 1.0)
    assert r.mean == 2.0 and abs(r.lo - 2 * np.exp(-1.96 * sd)) < 1e-12 and abs(r.hi - 2 * np.exp(1.96 * sd)) < 1e-12
    t = pa.table({"alpha": [0.1, 0.1, 0.01, 0.01], "t": [1.0, 2.0, 1.0, 2.0], "empirical": [0.30, 0.05, 0.31, 0.045],
                  "gaussian": [0.32, 0.046, 0.32, 0.046], "se": [0.001, 0.0005, 0.001, 0.0005]})
    big, drop = tail_intervals(t, 1_000_000)
    assert big.n == drop.n == 1000
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
