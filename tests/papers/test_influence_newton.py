"""influence_newton: the estimators against exact answers, the solver against scipy, the fits, the claims' verdicts,
and the certificate through the platform. The platform contract is checked by tests/test_paper_contract.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from scipy.optimize import minimize

from paperdag.common.verdicts import resolve
from paperdag.io import read_table
from paperdag.papers.influence_newton import glm
from paperdag.papers.influence_newton.attribution import estimate, removal_mask
from paperdag.papers.influence_newton.claims import claims
from paperdag.papers.influence_newton.data import cell_rng, coherent_subsets, random_subsets, sample_logistic
from paperdag.papers.influence_newton.params import ClaimParams
from paperdag.papers.influence_newton.stats import Coef, loglog, proportional
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
    fit = loglog(y, k=k, d=d, n=n)
    for term, value in (("k", 1.0), ("d", 1.0), ("n", -2.0)):
        assert fit[term].contains(value)
        assert not fit[term].contains(value + 0.3) and not fit[term].contains(value - 0.3)
    under = proportional(np.linspace(-1, 1, 30), 0.5 * np.linspace(-1, 1, 30) + 0.01 * rng.standard_normal(30))
    assert under.hi < 1.0 and under.contains(0.5)


def _coef(value: float, half: float = 0.02) -> Coef:
    return Coef(value, half / 2, value - half, value + half, 40, 0.95)


def _cells(err_if: float, err_ns: float, shift: float, subsets: int = 8) -> dict[str, list]:
    """Two certified cells (one random, one coherent) whose per-subset errors scatter by 1% around the given values."""
    jitter = 1 + 0.01 * np.sin(np.arange(subsets))
    values = {"err_if": err_if, "err_ns": err_ns, "shift": shift, "gap": abs(err_if - err_ns)}
    return {"n": [200, 200], "d": [6, 6], "k": [4, 4], "kind": ["coherent", "random"]} | {
        name: [v * jitter, v * jitter[::-1]] for name, v in values.items()}


def _claims(fit: dict, cells: dict, slopes: dict, failed: int = 0, grad_norm: float = 1e-13) -> dict[str, str]:
    """Verdict by claim id, resolved as the platform publishes them (solver target 1e-12)."""
    out = claims(fit, cells, slopes, certificate=(12, failed), refit=(grad_norm, 1e-12), group=(200, 6),
                 p=ClaimParams(slope_tol=0.15, track_tol=0.1))
    return {c.id: c.verdict for c in resolve(out)}


PAPER_FIT = {"err_ns": {"k": _coef(1.0), "d": _coef(1.0), "n": _coef(-2.0)},
             "gap": {"kd": _coef(1.0), "n": _coef(-2.0)}, "ratio": {"balance": _coef(1.0)}}
PAPER_SLOPES = {("random", "if"): _coef(0.85), ("random", "ns"): _coef(1.0), ("coherent", "if"): _coef(0.6),
                ("coherent", "ns"): _coef(0.98)}


def test_claims_hold_on_the_papers_numbers() -> None:
    """The paper's exponents with tight CIs, IF and NS both well below the shift, NS below IF: everything holds."""
    verdicts = _claims(PAPER_FIT, _cells(err_if=0.02, err_ns=0.005, shift=0.5), PAPER_SLOPES)
    assert set(verdicts.values()) == {"holds"}, verdicts


def test_claims_fail_on_wrong_exponents_slopes_and_ratios() -> None:
    """Exponents 0.5 off with tight CIs, IF more accurate than NS, biased slopes, a failed certificate cell and an
    unconverged refit: every evidence claim and check fails while both estimators still beat the no-update
    estimate."""
    fit = {"err_ns": {"k": _coef(1.5), "d": _coef(1.5), "n": _coef(-2.5)}, "gap": {"kd": _coef(1.5), "n": _coef(-2.5)},
           "ratio": {"balance": _coef(0.5)}}
    slopes = {("random", "if"): _coef(1.0), ("random", "ns"): _coef(0.5), ("coherent", "if"): _coef(1.2),
              ("coherent", "ns"): _coef(1.0)}
    verdicts = _claims(fit, _cells(err_if=0.005, err_ns=0.02, shift=0.5), slopes, failed=1, grad_norm=1e-9)
    preconditions = {"if_beats_no_update", "ns_beats_no_update"}
    assert all(verdicts[c] == "holds" for c in preconditions)
    assert all(v == "fails" for c, v in verdicts.items() if c not in preconditions), verdicts


def test_evidence_is_inconclusive_when_an_estimator_does_not_beat_no_update() -> None:
    """NS farther from theta_T than theta_hat itself: NS's competence fails, so every claim about NS is inconclusive
    whatever its own numbers (which would hold), while the IF-only claim is still judged."""
    verdicts = _claims(PAPER_FIT, _cells(err_if=0.02, err_ns=0.9, shift=0.5), PAPER_SLOPES)
    assert verdicts["ns_beats_no_update"] == "fails" and verdicts["if_beats_no_update"] == "holds"
    assert verdicts["group_if_underestimates_coherent"] == "holds"
    ns_claims = [c for c in verdicts if c.startswith(("ns_", "group_ns", "if_ns")) and c != "ns_beats_no_update"]
    assert ns_claims and all(verdicts[c] == "inconclusive" for c in ns_claims), verdicts


def test_exponent_whose_interval_straddles_the_band_is_inconclusive() -> None:
    """trend: a CI reaching past paper +- slope_tol neither holds nor fails (the old 'meets the band' rule held)."""
    fit = {**PAPER_FIT, "ratio": {"balance": Coef(0.85, 0.027, 0.80, 0.905, 180, 0.95)}}
    verdicts = _claims(fit, _cells(err_if=0.02, err_ns=0.005, shift=0.5), PAPER_SLOPES)
    assert verdicts["if_ns_ratio_exponent"] == "inconclusive"


def test_certificate_flags_cells_that_fail(smoke_runs, tmp_path: Path) -> None:
    """Sane thresholds certify every cell; a curvature floor of 1 per sample cannot hold for the logistic loss
    (l'' <= 1/4 and x ~ N(0, I)), nor can a gradient tolerance of 1e-30, so every cell is flagged."""
    cert = read_table(smoke_runs(SLUG)["verify"] / CERTIFICATE_FILE).to_pylist()
    assert all(r["passed"] and 0 < r["min_eig_ns"] and r["grad_norm"] < 1e-9 for r in cert)
    for override in ({"cert_min_eig": 1.0}, {"cert_grad_tol": 1e-30}):
        runs = run_stages(SLUG, ["verify"], root=tmp_path, **override)
        assert not any(r["passed"] for r in read_table(runs["verify"] / CERTIFICATE_FILE).to_pylist()), override
