"""influence_newton: the estimators and the trivial rungs against exact answers, the solver against scipy, the fits,
the claims' verdicts, and the certificate through the platform. The platform contract is checked by
tests/test_paper_contract.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from scipy.optimize import minimize

import pyarrow as pa
import pytest

from paperdag.common.plans import SamplePlan
from paperdag.common.stats import Interval
from paperdag.common.verdicts import resolve
from paperdag.io import read_table
from paperdag.papers.influence_newton import glm
from paperdag.papers.influence_newton.analysis import with_trivial
from paperdag.papers.influence_newton.attribution import estimate, removal_mask
from paperdag.papers.influence_newton.claims import claims
from paperdag.papers.influence_newton.data import cell_rng, coherent_subsets, random_subsets, sample_logistic
from paperdag.papers.influence_newton.params import ClaimParams, Plans
from paperdag.papers.influence_newton.stats import contains, loglog, proportional
from paperdag.papers.influence_newton.trivial import trivial_steps
from paperdag.papers.influence_newton.verify import CERTIFICATE_FILE
from paperdag.testing import run_stages

SLUG = "influence_newton"
F64 = torch.float64


def _fit(X: torch.Tensor, y: torch.Tensor, loss: glm.Loss, ridge: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    """(theta_hat, H) of the full problem."""
    W = torch.ones(1, len(y), dtype=F64)
    fit = glm.newton(X, y, W, torch.zeros(1, X.shape[1], dtype=F64), loss, ridge, 1e-12, 100)
    return fit.theta[0], glm.hessian(X, y, W, fit.theta, loss, ridge)[0]


def _logistic_problem(n: int, d: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    X, y, _ = sample_logistic(cell_rng(seed, n, d), n, d, 1.5)
    return torch.as_tensor(X), torch.as_tensor(y)


def test_newton_step_is_exact_for_least_squares() -> None:
    """Quadratic loss: one Newton step from theta_hat lands on the leave-T-out minimiser; IF does not."""
    rng = np.random.default_rng(1)
    X = torch.as_tensor(rng.standard_normal((60, 4)))
    y = X @ torch.as_tensor(rng.standard_normal(4)) + torch.as_tensor(rng.standard_normal(60))
    theta_hat, H = _fit(X, y, glm.Squared())
    idx = torch.as_tensor(random_subsets(rng, 60, 10, 5))
    est = estimate(X, y, idx, theta_hat, H, glm.Squared())
    for s in range(5):
        keep = removal_mask(60, idx)[s].bool()
        exact = torch.linalg.lstsq(X[keep], y[keep], driver="gelsd").solution
        assert torch.allclose(est.theta_ns[s], exact, atol=1e-10)
        assert (est.theta_if[s] - exact).norm() > 1e-3 * (exact - theta_hat).norm()


def test_influence_is_derivative_of_weighted_refit() -> None:
    """theta(eps) = argmin L - eps l_i: central finite difference (theta(eps) - theta(-eps)) / 2 eps = H^-1 grad l_i."""
    X, y = _logistic_problem(80, 3)
    theta_hat, H = _fit(X, y, glm.Logistic())
    eps = 1e-4
    idx = torch.arange(5).unsqueeze(1)
    W = torch.ones(10, 80, dtype=F64)
    for s in range(5):
        W[s, s] -= eps
        W[5 + s, s] += eps
    refit = glm.newton(X, y, W, theta_hat.repeat(10, 1), glm.Logistic(), 0.0, 1e-13, 50).theta
    fd = (refit[:5] - refit[5:]) / (2 * eps)
    infl = estimate(X, y, idx, theta_hat, H, glm.Logistic()).theta_if - theta_hat
    assert torch.allclose(fd, infl, rtol=1e-6, atol=1e-9)


def test_if_and_ns_approximate_leave_one_out() -> None:
    """Exact leave-one-out refits (removal = finite difference of weight 1): IF and NS are within 20% of the shift
    theta_-i - theta_hat; NS's error is second order (<= shift^2) and below IF's for most points."""
    X, y = _logistic_problem(200, 3)
    theta_hat, H = _fit(X, y, glm.Logistic())
    idx = torch.arange(200).unsqueeze(1)
    est = estimate(X, y, idx, theta_hat, H, glm.Logistic())
    loo = glm.newton(X, y, removal_mask(200, idx), theta_hat.repeat(200, 1), glm.Logistic(), 0.0, 1e-13, 50).theta
    shift = (loo - theta_hat).norm(dim=1)
    err_if, err_ns = (est.theta_if - loo).norm(dim=1), (est.theta_ns - loo).norm(dim=1)
    assert (err_if < 0.2 * shift).all() and (err_ns < 0.2 * shift).all()
    assert (err_ns <= shift**2).all()
    assert (err_ns < err_if).float().mean() > 0.75


def test_batched_newton_matches_scipy() -> None:
    """Leave-T-out refits of the batched solver, started far away (damped steps needed), agree with scipy's
    trust-region Newton on each problem separately."""
    X, y = _logistic_problem(150, 4)
    theta_hat, _ = _fit(X, y, glm.Logistic(), ridge=0.5)
    idx = torch.as_tensor(random_subsets(np.random.default_rng(2), 150, 20, 3))
    W = removal_mask(150, idx)
    ours = glm.newton(X, y, W, torch.full((3, 4), 8.0, dtype=F64), glm.Logistic(), 0.5, 1e-12, 50)
    assert (ours.grad_norm < 1e-10).all()
    for s in range(3):
        ref = _scipy_refit(X, y, W[s : s + 1], ridge=0.5)
        assert np.allclose(ours.theta[s].numpy(), ref, atol=1e-9)


def _scipy_refit(X: torch.Tensor, y: torch.Tensor, w: torch.Tensor, ridge: float) -> np.ndarray:
    """argmin of the weighted logistic loss by scipy's trust-region Newton (``trust-exact``)."""
    loss = glm.Logistic()

    def f(t: np.ndarray) -> float:
        return glm.objective(X, y, w, torch.as_tensor(t)[None], loss, ridge).item()

    def g(t: np.ndarray) -> np.ndarray:
        return glm.gradient(X, y, w, torch.as_tensor(t)[None], loss, ridge)[0].numpy()

    def h(t: np.ndarray) -> np.ndarray:
        return glm.hessian(X, y, w, torch.as_tensor(t)[None], loss, ridge)[0].numpy()

    return minimize(f, np.zeros(X.shape[1]), jac=g, hess=h, method="trust-exact", options={"gtol": 1e-11}).x


def test_trivial_steps_are_the_influence_function_for_diagonal_and_isotropic_hessians() -> None:
    """Least squares on orthogonal columns X = Q diag(s): H = diag(s^2), so the diagonal step is exactly IF and equals
    theta_hat + g_T / s^2 by hand; with equal s (H = s^2 I) the curvature step is IF too. On correlated columns both
    differ from IF (they drop the Hessian's off-diagonal structure)."""
    rng = np.random.default_rng(3)
    Q, _ = np.linalg.qr(rng.standard_normal((80, 4)))
    idx = torch.as_tensor(random_subsets(rng, 80, 6, 5))
    for s in (np.array([1.0, 2.0, 3.0, 5.0]), np.full(4, 2.5)):
        X = torch.as_tensor(Q * s)
        y = X @ torch.as_tensor(rng.standard_normal(4)) + torch.as_tensor(rng.standard_normal(80))
        theta_hat, H = _fit(X, y, glm.Squared())
        steps = trivial_steps(X, y, idx, theta_hat, H, glm.Squared())
        theta_if = estimate(X, y, idx, theta_hat, H, glm.Squared()).theta_if
        g = np.stack([((X[i] @ theta_hat - y[i])[:, None] * X[i]).sum(0).numpy() for i in idx])
        assert np.allclose(steps["diagonal"].numpy(), theta_hat.numpy() + g / s**2, atol=1e-10)
        assert torch.allclose(steps["diagonal"], theta_if, atol=1e-10)
        assert torch.allclose(steps["curvature"], theta_if, atol=1e-10) == bool(np.ptp(s) == 0)
    X = torch.as_tensor(rng.standard_normal((80, 4)) @ np.array([[1, 0.8, 0, 0], [0, 1, 0.8, 0], [0, 0, 1, 0],
                                                                 [0, 0, 0, 1]]))
    y = X.sum(1) + torch.as_tensor(rng.standard_normal(80))
    theta_hat, H = _fit(X, y, glm.Squared())
    steps = trivial_steps(X, y, idx, theta_hat, H, glm.Squared())
    theta_if = estimate(X, y, idx, theta_hat, H, glm.Squared()).theta_if
    assert all((steps[name] - theta_if).norm(dim=1).min() > 1e-3 for name in ("diagonal", "curvature"))


def test_trivial_estimates_join_the_refits_by_subset_keys() -> None:
    """with_trivial matches rows by (n, d, k, kind, subset) whatever the row order, and refuses other subsets."""
    keys = {"n": [10, 10, 10], "d": [2, 2, 2], "k": [1, 1, 2], "kind": ["random"] * 3, "subset": [0, 1, 0]}
    estimates = pa.table(keys | {"theta_exact": [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]})
    trivial = pa.table({c: v[::-1] for c, v in keys.items()} | {
        "theta_curvature": [[2.5, 2.5], [1.5, 1.5], [0.5, 0.5]],
        "theta_diagonal": [[2.0, 2.0], [1.0, 1.0], [0.0, 0.0]]})
    joined = with_trivial(estimates, trivial).to_pylist()
    assert [r["theta_curvature"][0] - r["theta_exact"][0] for r in joined] == [0.5, 0.5, 0.5]
    with pytest.raises(ValueError, match="same subsets"):
        with_trivial(estimates, trivial.slice(0, 2))


def test_coherent_groups_are_same_label_clusters() -> None:
    """A coherent group shares its anchor's label and is tighter than a random group of the same size."""
    X, y, _ = sample_logistic(cell_rng(0, 5), 400, 5, 1.5)
    groups = coherent_subsets(cell_rng(0, 6), X, y, 20, 10)
    rand = random_subsets(cell_rng(0, 7), 400, 20, 10)
    assert all(len(set(y[g])) == 1 and len(set(g)) == 20 for g in groups)
    spread = [np.mean([np.linalg.norm(X[g] - X[g].mean(0), axis=1).mean() for g in sets]) for sets in (groups, rand)]
    assert spread[0] < 0.8 * spread[1]


def test_loglog_recovers_exponents_and_rejects_wrong_ones() -> None:
    """y = 3 k d / n^2 with 5% log-normal noise: each CI contains the true exponent and excludes it +- 0.3."""
    rng = np.random.default_rng(0)
    k, d, n = (a.ravel().astype(float) for a in np.meshgrid([1, 4, 16, 64], [5, 10, 20], [1e3, 2e3, 4e3]))
    y = 3 * k * d / n**2 * np.exp(0.05 * rng.standard_normal(k.size))
    fit = loglog(y, unit="cell", k=k, d=d, n=n)
    for term, value in (("k", 1.0), ("d", 1.0), ("n", -2.0)):
        assert contains(fit[term], value)
        assert not contains(fit[term], value + 0.3) and not contains(fit[term], value - 0.3)
        assert fit[term].method == "fit" and fit[term].unit == "cell" and fit[term].dof == k.size - 4
    assert np.isclose(fit["k"].span, np.log(64)) and np.isclose(fit["n"].span, np.log(4))
    under = proportional(np.linspace(-1, 1, 30), 0.5 * np.linspace(-1, 1, 30) + 0.01 * rng.standard_normal(30))
    assert under.hi < 1.0 and contains(under, 0.5) and under.span == 2.0


def test_fit_interval_matches_scipy_linregress() -> None:
    """A one-regressor fit's interval is scipy's slope +- t_{0.975, n-2} stderr, judged at another level by its t."""
    from scipy import stats

    rng = np.random.default_rng(4)
    x = np.linspace(1.0, 3.0, 25)
    y = 2.0 + 0.7 * x + 0.1 * rng.standard_normal(25)
    ours, ref = loglog(np.exp(y), x=np.exp(x))["x"], stats.linregress(x, y)
    half = stats.t.ppf(0.975, 23) * ref.stderr
    assert np.allclose([ours.mean, ours.lo, ours.hi], [ref.slope, ref.slope - half, ref.slope + half])
    wider = ours.at(0.99)
    assert np.isclose(wider.hi - wider.mean, stats.t.ppf(0.995, 23) * ref.stderr)


def _coef(value: float, half: float = 0.02, unit: str = "cell") -> Interval:
    return Interval(value, value - half, value + half, 40, 0.95, unit, "fit", df=37.0, span=3.0)


def _plan(unit: str, n: int) -> SamplePlan:
    return SamplePlan(unit=unit, n=n, basis="design", effect=None, power=None, pilot_n=0, pilot_sd=None, looks=1,
                      spending="none", why="the test's design size")


PLANS = Plans(subsets=_plan("subset", 8), cells=_plan("cell", 40), groups=_plan("group", 40))


def _cells(err_if: float, err_ns: float, shift: float, subsets: int = 8,
           trivial: float | None = None) -> dict[str, list]:
    """Two certified cells (one random, one coherent) whose per-subset errors scatter by 1% around the given values,
    each quantity with its own phase; the diagonal and curvature steps' errors are ``trivial`` (default: half the
    shift) and 1.1x that."""
    trivial = shift / 2 if trivial is None else trivial
    values = {"err_if": err_if, "err_ns": err_ns, "shift": shift, "gap": abs(err_if - err_ns),
              "err_diagonal": trivial, "err_curvature": 1.1 * trivial}
    scatter = {name: 1 + 0.01 * np.sin(np.arange(subsets) + 2 * phase) for phase, name in enumerate(values)}
    return {"n": [200, 200], "d": [6, 6], "k": [4, 4], "kind": ["coherent", "random"]} | {
        name: [v * scatter[name], v * scatter[name][::-1]] for name, v in values.items()}


def _both(a: dict[str, list], b: dict[str, list]) -> dict[str, list]:
    """The cells of a and of b (b's at k = 8)."""
    return {name: a[name] + (b[name] if name != "k" else [8] * len(b[name])) for name in a}


def _claims(fit: dict, cells: dict, slopes: dict, failed: int = 0, grad_norm: float = 1e-13) -> dict[str, str]:
    """Verdict by claim id, resolved as the platform publishes them (solver target 1e-12)."""
    out = claims(fit, cells, slopes, certificate=(12, failed), refit=(grad_norm, 1e-12), group=(200, 6),
                 p=ClaimParams(slope_tol=0.15, track_tol=0.1), plans=PLANS)
    return {c.id: c.verdict for c in resolve(out)}


PAPER_FIT = {"err_ns": {"k": _coef(1.0), "d": _coef(1.0), "n": _coef(-2.0)},
             "gap": {"kd": _coef(1.0), "n": _coef(-2.0)}, "ratio": {"balance": _coef(1.0)}}
PAPER_SLOPES = {("random", "if"): _coef(0.85, unit="group"), ("random", "ns"): _coef(1.0, unit="group"),
                ("coherent", "if"): _coef(0.6, unit="group"), ("coherent", "ns"): _coef(0.98, unit="group")}
COMPETENT = {"if_beats_trivial_estimates", "ns_beats_trivial_estimates"}


def test_claims_hold_on_the_papers_numbers() -> None:
    """The paper's exponents with tight CIs, IF and NS both well below the trivial rungs, NS below IF: everything
    holds."""
    verdicts = _claims(PAPER_FIT, _cells(err_if=0.02, err_ns=0.005, shift=0.5), PAPER_SLOPES)
    assert set(verdicts.values()) == {"holds"}, verdicts


def test_claims_fail_on_wrong_exponents_slopes_and_ratios() -> None:
    """Exponents 0.5 off with tight CIs, IF more accurate than NS in one random cell (of two), biased slopes, a failed
    certificate cell and an unconverged refit: every evidence claim and check fails (Holm over the cells) while both
    estimators still beat the trivial rungs."""
    fit = {"err_ns": {"k": _coef(1.5), "d": _coef(1.5), "n": _coef(-2.5)}, "gap": {"kd": _coef(1.5), "n": _coef(-2.5)},
           "ratio": {"balance": _coef(0.5)}}
    slopes = {("random", "if"): _coef(1.0, unit="group"), ("random", "ns"): _coef(0.5, unit="group"),
              ("coherent", "if"): _coef(1.2, unit="group"), ("coherent", "ns"): _coef(1.0, unit="group")}
    cells = _both(_cells(err_if=0.005, err_ns=0.02, shift=0.5), _cells(err_if=0.02, err_ns=0.005, shift=0.5))
    verdicts = _claims(fit, cells, slopes, failed=1, grad_norm=1e-9)
    assert all(verdicts[c] == "holds" for c in COMPETENT)
    assert all(v == "fails" for c, v in verdicts.items() if c not in COMPETENT), verdicts


def test_evidence_is_inconclusive_when_an_estimator_does_not_beat_the_strongest_rung() -> None:
    """NS farther from theta_T than the diagonal step (though nearer than theta_hat) in two of four cells: NS's
    competence fails against the strongest rung (Holm over the cells), so every claim about NS is inconclusive
    whatever its own numbers (which would hold), while the IF-only claim is still judged."""
    cells = _both(_cells(err_if=0.02, err_ns=0.3, shift=0.5, trivial=0.1), _cells(err_if=0.02, err_ns=0.005, shift=0.5))
    verdicts = _claims(PAPER_FIT, cells, PAPER_SLOPES)
    assert verdicts["ns_beats_trivial_estimates"] == "fails" and verdicts["if_beats_trivial_estimates"] == "holds"
    assert verdicts["group_if_underestimates_coherent"] == "holds"
    ns_claims = [c for c in verdicts if c.startswith(("ns_", "group_ns", "if_ns")) and c not in COMPETENT]
    assert ns_claims and all(verdicts[c] == "inconclusive" for c in ns_claims), verdicts


def test_competence_is_judged_against_the_strongest_rung_with_the_next_beside_it() -> None:
    """The ladder orders the rungs by geometric-mean error: the diagonal step first, the curvature step next."""
    out = claims(PAPER_FIT, _cells(err_if=0.02, err_ns=0.005, shift=0.5, trivial=0.1), PAPER_SLOPES,
                 certificate=(12, 0), refit=(1e-13, 1e-12), group=(200, 6),
                 p=ClaimParams(slope_tol=0.15, track_tol=0.1), plans=PLANS)
    row = next(c for c in out if c.id == "if_beats_trivial_estimates").row()
    assert [r["baseline"] for r in row["ladder"]][:2] == [row["baseline"], "curvature step theta_hat + g_T d / tr H"]
    assert row["baseline"].startswith("diagonal step") and row["unit"] == "subset" and row["n"] == 8


def test_exponent_whose_interval_straddles_the_band_is_inconclusive() -> None:
    """trend: a CI reaching past paper +- slope_tol neither holds nor fails (the old 'meets the band' rule held); a fit
    interval says what wider regressor range would resolve it, not a number of cells."""
    fit = {**PAPER_FIT, "ratio": {"balance": Interval(0.86, 0.81, 0.91, 180, 0.95, "cell", "fit", df=177.0, span=2.0)}}
    out = claims(fit, _cells(err_if=0.02, err_ns=0.005, shift=0.5), PAPER_SLOPES, certificate=(12, 0),
                 refit=(1e-13, 1e-12), group=(200, 6), p=ClaimParams(slope_tol=0.15, track_tol=0.1), plans=PLANS)
    ratio = next(c for c in resolve(out) if c.id == "if_ns_ratio_exponent")
    assert ratio.verdict == "inconclusive" and ratio.cause == "range" and "regressor range" in ratio.reason


def test_certificate_flags_cells_that_fail(smoke_runs, tmp_path: Path) -> None:
    """Sane thresholds certify every cell; a curvature floor of 1 per sample cannot hold for the logistic loss
    (l'' <= 1/4 and x ~ N(0, I)), nor can a gradient tolerance of 1e-30, so every cell is flagged."""
    cert = read_table(smoke_runs(SLUG)["verify"] / CERTIFICATE_FILE).to_pylist()
    assert all(r["passed"] and 0 < r["min_eig_ns"] and r["grad_norm"] < 1e-9 for r in cert)
    for override in ({"cert_min_eig": 1.0}, {"cert_grad_tol": 1e-30}):
        runs = run_stages(SLUG, ["verify"], root=tmp_path, **override)
        assert not any(r["passed"] for r in read_table(runs["verify"] / CERTIFICATE_FILE).to_pylist()), override
