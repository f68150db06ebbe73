"""distill_multiindex: the task and the two-phase algorithm against closed forms (Stein's lemma, the ridge normal
equations via scipy), the distillation objectives, the claims' verdicts, and the smoke run through the platform.
The platform contract is checked by tests/test_paper_contract.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.linalg import lstsq

from paperdag.common.stats import Interval, mean_ci
from paperdag.common.verdicts import resolve
from paperdag.io import read_table
from paperdag.papers.distill_multiindex import network as nw
from paperdag.papers.distill_multiindex.claims import Compression, Grid, Headline, claims
from paperdag.papers.distill_multiindex.distill import Schedule, best_labels, match_gradient, surrogate_correlation
from paperdag.common.plans import SamplePlan
from paperdag.papers.distill_multiindex.params import ClaimParams, Plans
from paperdag.papers.distill_multiindex.stats import PowerFit, ScalingFits, power_fit, scaling_fits
from paperdag.papers.distill_multiindex.task import link_matrix, make_task, principal_angles, span_energy, task_rng

SLUG = "distill_multiindex"
F64 = torch.float64


@pytest.fixture(autouse=True)
def _one_thread():
    """Small tensors: one torch thread (restored after each test) avoids thread contention on shared cores."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_link_has_unit_variance_and_zero_mean() -> None:
    """Var(z^T C z - tr C) = 2 ||C||_F^2 = 1 and E = 0, checked by Monte Carlo on 200k rows."""
    task = make_task(0, 12, 3)
    _, y = task.sample(task_rng(0, 12, 3, "test"), 200_000)
    assert abs(float(y.mean())) < 0.01 and abs(float(y.var()) - 1.0) < 0.02
    assert np.isclose(2 * np.sum(link_matrix(4) ** 2), 1.0)
    assert torch.allclose(task.U.T @ task.U, torch.eye(3, dtype=F64), atol=1e-12)


def test_phase1_gradient_matches_stein_closed_form_and_lies_in_span_U() -> None:
    """On 400k rows the empirical G_D(W) matches (2 A w - (w^T A w) w) / sqrt(2 pi) to sampling error
    (~ sqrt(d / n)), and its part outside span(U) is the closed form's small w-term plus sampling error."""
    d, r, n = 16, 2, 400_000
    task = make_task(1, d, r)
    X, y = task.sample(task_rng(1, d, r, "phase1"), n)
    W = nw.symmetric_init(torch.Generator().manual_seed(0), d, 32, 1.0).W0[:16]
    emp, pop = nw.correlation(W, X, y), nw.population_correlation(W, task.A)
    noise = math.sqrt(d / n) * 2
    assert (emp - pop).norm(dim=1).max() < noise
    off = emp - emp @ task.U @ task.U.T
    off_pop = pop - pop @ task.U @ task.U.T
    assert (off - off_pop).norm(dim=1).max() < noise
    assert span_energy(pop, task.U) > 0.9 and span_energy(emp, task.U) > 0.9
    wrong = make_task(2, d, r)  # a wrong basis: the closed form for another U does not match
    assert (emp - nw.population_correlation(W, wrong.A)).norm(dim=1).max() > 5 * noise


def test_ridge_matches_augmented_least_squares_in_primal_and_dual_form() -> None:
    """a = argmin (1/m)||Phi a - y||^2 + lam ||a||^2 is the least-squares solution of the augmented system
    [Phi; sqrt(m lam) I] a = [y; 0] (scipy's SVD-based lstsq), for m >= L (primal) and m < L (dual, push-through)."""
    rng = np.random.default_rng(0)
    for m, width in ((80, 20), (10, 30)):
        Phi, y = rng.standard_normal((m, width)), rng.standard_normal(m)
        ours = nw.ridge(torch.as_tensor(Phi), torch.as_tensor(y), 0.01).numpy()
        oracle = lstsq(np.vstack([Phi, np.sqrt(m * 0.01) * np.eye(width)]), np.r_[y, np.zeros(width)])[0]
        np.testing.assert_allclose(ours, oracle, rtol=1e-8, atol=1e-10)


def test_symmetric_init_gives_zero_output_and_learns_the_task() -> None:
    """f_0 = 0 at the symmetric init; the two-phase network beats the zero predictor and random features."""
    d, r, L = 16, 2, 128
    task = make_task(0, d, r)
    init = nw.symmetric_init(torch.Generator().manual_seed(0), d, L, 1.0)
    X1, y1 = task.sample(task_rng(0, d, r, "phase1"), 16_000)
    X2, y2 = task.sample(task_rng(0, d, r, "phase2"), 2_000)
    Xt, yt = task.sample(task_rng(0, d, r, "test"), 2_000)
    assert float((nw.features(init.W0, torch.zeros(L, dtype=F64), Xt) @ init.a).abs().max()) < 1e-12
    net = nw.train(init, (X1, y1), (X2, y2), 1.0, 1e-4)
    rf = nw.Network(init.W0, init.b, nw.ridge(nw.features(init.W0, init.b, X2), y2, 1e-4))
    assert nw.relative_error(net, Xt, yt) < 0.1 < nw.relative_error(rf, Xt, yt)


def test_surrogate_forward_is_exact_and_best_labels_solve_least_squares() -> None:
    """The straight-through gate leaves G_S unchanged; best_labels beats any perturbed labels."""
    rng = np.random.default_rng(3)
    W = torch.as_tensor(rng.standard_normal((20, 6)))
    X, y = torch.as_tensor(rng.standard_normal((5, 6))), torch.as_tensor(rng.standard_normal(5))
    assert torch.allclose(surrogate_correlation(W, X, y, 0.5), nw.correlation(W, X, y))
    target = torch.as_tensor(rng.standard_normal((20, 6)))
    best = best_labels(W, target, X)
    loss = (nw.correlation(W, X, best) - target).norm()
    for _ in range(5):
        assert loss <= (nw.correlation(W, X, best + 0.1 * torch.randn(5, dtype=F64)) - target).norm()


def test_best_labels_do_not_depend_on_heap_contents() -> None:
    """torch's default CPU lstsq driver reads an uninitialised pivot array (pytorch#187411): with small int32
    tensors freed before each call its solutions differed in the last bits; the pinned driver gives one answer."""
    g = torch.Generator().manual_seed(0)
    W0, X = torch.randn(64, 16, generator=g, dtype=F64), torch.randn(6, 16, generator=g, dtype=F64)
    target = torch.randn(64, 16, generator=g, dtype=F64)
    answers = set()
    for k in range(8):
        junk = torch.full((8,), k, dtype=torch.int32)
        del junk
        answers.add(best_labels(W0, target, X).numpy().tobytes())
    assert len(answers) == 1


def test_gradient_matching_reduces_the_loss_and_moves_points_into_span_U() -> None:
    """Matching the population G(W_0) of a d = 16, r = 1 task: the loss drops and the points' span(U) energy rises
    far above r / d."""
    d, r = 16, 1
    task = make_task(0, d, r)
    init = nw.symmetric_init(torch.Generator().manual_seed(0), d, 64, 1.0)
    target = nw.population_correlation(init.W0, task.A)
    X0 = torch.as_tensor(np.random.default_rng(0).standard_normal((4, d)))
    X, _, curve = match_gradient(init.W0, target, X0, Schedule(100, 0.05), 0.5)
    assert curve[-1] < 0.5 * curve[0]
    assert span_energy(X, task.U) > max(0.5, 3 * span_energy(X0, task.U))
    assert principal_angles(X, task.U)[0] < principal_angles(X0, task.U)[0]


def test_power_fit_recovers_exponent() -> None:
    x = np.geomspace(100, 3000, 12)
    y = 3 * x * np.exp(0.05 * np.random.default_rng(0).standard_normal(12))
    fit = power_fit(x, y)
    assert fit.slope.lo < 1.0 < fit.slope.hi and fit.r2 > 0.95
    assert not fit.slope.lo < 1.3 < fit.slope.hi
    assert fit.slope.method == "fit" and fit.slope.unit == "run" and np.isclose(fit.slope.span, np.log(30))


def test_loglinear_fit_matches_frisch_waugh_lovell_and_power_fit() -> None:
    """On a 3 x 3 x 2 factorial grid with noise, each exponent equals scipy's linregress of log y on log x_k after
    both are residualised on the other regressors (Frisch-Waugh-Lovell), its standard error that slope's stderr x
    sqrt((n - 2) / (n - p)); one regressor reproduces power_fit; a constant regressor has no exponent."""
    from scipy import stats as sps

    from paperdag.papers.distill_multiindex.stats import loglinear_fit

    r, d, L = (np.array(v, float).ravel() for v in np.meshgrid([1, 2, 4], [16, 32, 64], [256, 512], indexing="ij"))
    r, d, L = np.tile(r, 2), np.tile(d, 2), np.tile(L, 2)
    y = 3 * r**2 * d**0.3 * L * np.exp(0.1 * np.random.default_rng(1).standard_normal(len(r)))
    fit = loglinear_fit(y, {"r": r, "d": d, "L": L, "one": np.ones_like(r)})
    Z = np.column_stack([np.ones_like(r), np.log(d), np.log(L)])
    res = lambda v: v - Z @ np.linalg.lstsq(Z, v, rcond=None)[0]
    fwl = sps.linregress(res(np.log(r)), res(np.log(y)))
    n, p = len(r), 4
    half = sps.t.ppf(0.975, n - p) * fwl.stderr * np.sqrt((n - 2) / (n - p))
    assert np.isclose(fit.exponents["r"].mean, fwl.slope)
    assert np.isclose(fit.exponents["r"].hi - fit.exponents["r"].mean, half)
    assert fit.exponents["r"].lo < 2 < fit.exponents["r"].hi and fit.exponents["L"].lo < 1 < fit.exponents["L"].hi
    assert np.isnan(fit.exponents["one"].mean)
    alone = loglinear_fit(y, {"r": r}).exponents["r"]
    pf = power_fit(r, y).slope
    assert np.allclose([alone.mean, alone.lo, alone.hi], [pf.mean, pf.lo, pf.hi])


def test_baseline_curves_reach_the_reference_with_all_rows_and_pick_lambda_on_validation() -> None:
    """With every phase-1 row the random-phase-1 baseline is the full-data network (same W_1 up to summation order,
    same second layer); the random subset's lam is the validation argmin; first_reaching finds the first crossing."""
    from paperdag.papers.distill_multiindex import baselines
    from paperdag.papers.distill_multiindex.cell import Config, build_cell, error

    cfg = Config(512, 256, 256, 1.0, 1.0, 1e-4, Schedule(1, 0.01), 0.5, 16)
    cell = build_cell(0, 8, 1, 16, cfg)
    lams = [1e-4, 1e-2, 1.0]
    curves = baselines.real_data_curves(cell, cfg, [64, 512], lams)
    assert np.isclose(curves.random_phase1[-1], error(cell, cell.reference), rtol=1e-6)
    Xs, ys = cell.real1[0][baselines.subset_order(cell)[:64]], cell.real1[1][baselines.subset_order(cell)[:64]]
    W1 = nw.phase1(cell.init, Xs, ys, cfg.step)
    val = [nw.relative_error(nw.Network(W1, cell.init.b, nw.ridge(nw.features(W1, cell.init.b, Xs), ys, lam)),
                             *cell.real2) for lam in lams]
    assert curves.lambdas[0] == lams[int(np.argmin(val))]
    assert baselines.first_reaching([1, 2, 4], [0.5, 0.2, 0.1], 0.2) == 2
    assert baselines.first_reaching([1, 2, 4], [0.5, 0.3, 0.25], 0.2) is None


PARAMS = ClaimParams(tol=0.1, tol_near=0.01, near_factor=1.0, laws_at="near", min_compression=2.0, energy_min=0.5,
                     slope_tol=0.25, min_decades_L=1.2)
SPREAD = np.array([-0.01, 0.0, 0.01])


def _plan(unit: str, n: int) -> SamplePlan:
    return SamplePlan(unit=unit, n=n, basis="design", effect=None, power=None, pilot_n=0, pilot_sd=None, looks=1,
                      spending="none", why="the test's design size")


PLANS = Plans(compare_seeds=_plan("seed", 3), grid_seeds=_plan("seed", 3), grid_runs=_plan("run", 36))
LAWS = ("memory_grows_no_faster_than_r2d_plus_L", "phase1_points_grow_no_faster_than_r2",
        "phase2_memory_grows_no_faster_than_L")
CELLS = ["d 16 r 1 L 256", "d 16 r 4 L 512"]


def _fit(value: float) -> Interval:
    return Interval(value, value - 0.1, value + 0.1, 36, 0.95, "run", "fit", df=34.0, span=2.0)


def _cells(value: float) -> dict[str, Interval]:
    """Two cells, each an interval over 3 seeds spread +-0.01 around ``value`` (the second one +0.2 higher)."""
    return {k: mean_ci(value + shift + SPREAD, unit="seed") for k, shift in zip(CELLS, (0.0, 0.2), strict=True)}


def _verdicts(distilled: float = 0.02, e_rf: float = 0.8, subset: float | None = 2048, phase1: float | None = 2048,
              slope: float = 1.0, bookkeeping: float = 0.43, reached: int = 36, headroom: float = 0.3,
              energy: float = 0.8, reference_energy: float = 0.9, r_exp: float = 2.0,
              L_exp: float = 1.0, rung: float = 0.9, largest: float = 0.03) -> dict[str, str]:
    """The published verdicts (resolved) of claims on per-seed errors spread +-0.01 around the given means, and
    baselines reaching the target at ``subset`` / ``phase1`` points (x 0.9, 1, 1.1; None: censored) against a
    distilled set of 12 (6 in phase 1); the trivial rungs score ``rung`` and ``rung`` + 0.05 at the headline budget,
    the baselines ``largest`` at their largest subset (target e_ref + 0.1)."""
    rungs = {"random subset": rung + SPREAD[::-1], "random phase-1 points": rung + 0.05 + SPREAD}
    h = Headline(distilled + SPREAD, 0.01 + SPREAD / 10, e_rf + SPREAD, (16, 528), rungs, 16)

    def comp(points: float | None, distilled_points: int) -> Compression:
        base = [None if points is None else round(points * f) for f in (0.9, 1.0, 1.1)]
        return Compression(base, [distilled_points] * 3, "e_ref + 0.1", 8192, largest + SPREAD,
                           np.full(3, 0.11))

    g = _grid(ScalingFits(PowerFit(_fit(slope), 0.0, 0.9), bookkeeping, _fit(r_exp), _fit(L_exp), reached, 1.2),
              reached, headroom, energy, reference_energy)
    return {c.id: c.verdict for c in resolve(claims(h, comp(subset, 12), comp(phase1, 6), g, PARAMS, PLANS))}


def _grid(fits: ScalingFits, reached: int = 36, headroom: float = 0.3, energy: float = 0.8,
          reference_energy: float = 0.9) -> Grid:
    return Grid(fits, reached, 36, _cells(headroom), _cells(energy), _cells(reference_energy), CELLS[0],
                {"min_distilled": energy, "mean_distilled": 0.9, "mean_random_r_over_d": 0.08},
                "e_ref + max(0.01, 1 e_ref)", "near", {"target": "e_ref + 0.1", "laws_at": "loose"})


def test_compression_ratio_is_the_geometric_mean_with_a_log_scale_interval() -> None:
    """ratio() = exp(mean log(b / m)) (scipy's gmean) with the t-interval of the logs, exponentiated; censored seeds
    are left out; the claim judges the log ratio itself."""
    from scipy.stats import gmean

    c = Compression([100, 200, None, 400], [10, 10, 10, 20], "t", 8192, np.array([0.1, 0.2, 0.3, 0.2]),
                    np.full(4, 0.25))
    iv, logs = c.ratio(), np.log([10.0, 20.0, 20.0])
    assert np.isclose(iv.mean, gmean([10, 20, 20])) and iv.n == 3
    assert np.allclose([np.log(iv.lo), np.log(iv.hi)], [mean_ci(logs).lo, mean_ci(logs).hi])
    assert c.log_ratio().unit == "seed" and np.isclose(c.log_ratio().mean, logs.mean())
    assert np.isclose(c.learning().mean, -0.05) and c.learning().method == "paired t"


def test_claims_hold_on_favourable_numbers_and_fail_on_their_own() -> None:
    """All claims hold on favourable numbers; each evidence claim fails when its own number turns against it and its
    preconditions still hold (baselines that learn, but with no more memory than the distilled set)."""
    assert set(_verdicts().values()) == {"holds"}
    against = {"distilled_matches_full_data": {"distilled": 0.15}, "random_subset_far_worse": {"subset": 10},
               "phase1_matching_needed": {"phase1": 5}, "distilled_points_in_span_U": {"energy": 0.35},
               LAWS[0]: {"slope": 2.0}, LAWS[1]: {"r_exp": 3.0}, LAWS[2]: {"L_exp": 2.0}}
    for claim_id, kwargs in against.items():
        verdict = _verdicts(**kwargs)
        assert verdict[claim_id] == "fails" and sum(v != "holds" for v in verdict.values()) == 1, (claim_id, verdict)


def test_competence_is_judged_against_the_strongest_rung() -> None:
    """The distilled set is judged against the better of the two real-data baselines (the next recorded beside it):
    worse than it, the precondition fails and the headline claim is inconclusive."""
    rows = {c.id: c.row() for c in claims(*_inputs(), PARAMS, PLANS)}
    row = rows["distilled_beats_trivial_baselines"]
    assert row["baseline"] == "random subset" and [r["baseline"] for r in row["ladder"]] == [
        "random subset", "random phase-1 points"]
    beaten = _verdicts(distilled=0.3, rung=0.05)
    assert beaten["distilled_beats_trivial_baselines"] == "fails"
    assert beaten["distilled_matches_full_data"] == "inconclusive"


def _inputs() -> tuple:
    rungs = {"random subset": 0.9 + SPREAD, "random phase-1 points": 0.95 + SPREAD}
    h = Headline(0.02 + SPREAD, 0.01 + SPREAD / 10, 0.8 + SPREAD, (16, 528), rungs, 16)
    comp = Compression([2048] * 3, [12] * 3, "e_ref + 0.1", 8192, 0.03 + SPREAD, np.full(3, 0.11))
    return h, comp, comp, _grid(ScalingFits(PowerFit(_fit(1.0), 0.0, 0.9), 0.43, _fit(2.0), _fit(1.0), 36, 1.2))


def test_evidence_is_inconclusive_when_its_precondition_fails() -> None:
    """A baseline that never gets below the target cannot lose to distillation: its compression claim is
    inconclusive; a fit whose interval reaches the bookkeeping exponent, a censored run, a grid cell without headroom
    or a reference whose features miss span(U) leave their claims inconclusive."""
    censored = _verdicts(subset=None, phase1=None, largest=0.2)
    assert censored["random_subset_learns"] == censored["random_phase1_learns"] == "fails"
    assert censored["random_subset_far_worse"] == censored["phase1_matching_needed"] == "inconclusive"
    for kwargs, failed in (({"slope": 0.5}, "memory_fit_beats_bookkeeping"),
                           ({"reached": 35}, "grid_cells_reach_target"), ({"headroom": -0.3}, "headroom_grid")):
        verdict = _verdicts(**kwargs)
        assert verdict[failed] != "holds" and verdict[LAWS[0]] == "inconclusive", verdict
    assert _verdicts(reached=35)[LAWS[2]] == "inconclusive"
    narrow = claims(*_inputs()[:3], _grid(ScalingFits(PowerFit(_fit(1.0), 0.0, 0.9), 0.43, _fit(2.0), _fit(1.0), 36,
                                                      0.3)), PARAMS, PLANS)
    narrow = {c.id: c.verdict for c in resolve(narrow)}
    assert narrow["fit_spans_decades_of_L"] == "fails" and narrow[LAWS[2]] == "inconclusive"
    assert _verdicts(e_rf=0.05)["distilled_matches_full_data"] == "inconclusive"
    assert _verdicts(reference_energy=0.3)["distilled_points_in_span_U"] == "inconclusive"


def test_smoke_run_learns_and_distills(smoke_runs) -> None:
    """Every reference network beats the zero predictor; every grid cell's distilled phase-1 set was searched; every
    comparison seed has the baselines' full curves."""
    runs = smoke_runs(SLUG)
    refs = read_table(runs["reference"] / "references.parquet").to_pylist()
    assert all(r["e_ref"] < 0.5 for r in refs)
    search = [row for i in range(4) for row in read_table(runs[f"distill_{i}"] / "search.parquet").to_pylist()]
    assert len(search) == 8 and all(0 <= r[f"energy_phase1_{t}"] <= 1 for r in search for t in ("loose", "near"))
    assert all(r["excess_near"] == max(0.01, r["e_ref"]) and r["excess_loose"] == 0.1 for r in search)
    compare = read_table(runs["compare"] / "compare.parquet").to_pylist()
    assert len(compare) == 3 and all(len(r["random_subset"]) == len(r["sizes"]) for r in compare)
    assert all(0 <= r["kcenter"] and r["kcenter_points"] == 16 for r in compare)
    claims_ = {c["id"]: c for c in runs.metrics()["claims"]}
    assert set(claims_) >= {*LAWS, "random_subset_far_worse"}
    assert [r["baseline"] for r in claims_["distilled_beats_trivial_baselines"]["ladder"]] != []
    assert claims_["fit_spans_decades_of_L"]["verdict"] == ("holds" if claims_[LAWS[2]]["measured"]["decades_L"] >= 1.2
                                                         else "fails")


def _table(m1, m2, cells) -> list[dict]:
    """An M* table over ``cells`` (d, r, L), 3 seeds each with +-5% multiplicative noise on M1* and M2*."""
    noise = np.exp(0.05 * np.random.default_rng(7).standard_normal((len(cells) * 3, 2)))
    return [{"d": d, "r": r, "width": L, "m1": m1(d, r, L) * noise[3 * i + s, 0], "m2": m2(d, r, L) * noise[3 * i + s, 1]}
            for i, (d, r, L) in enumerate(cells) for s in range(3)]


GRID = [(d, r, 256) for d in (16, 32, 64) for r in (1, 2, 4)] + [(d, r, L) for d, r in ((16, 1), (32, 2))
                                                                  for L in (64, 128, 512, 1024)]


def test_one_sided_law_passes_r2_and_flat_tables_and_fails_r3() -> None:
    """Synthetic M* tables through the fits and the claims: M1* = c r^2 and a flat M1* pass the phase-1 law (grows no
    faster than r^2), M1* = c r^3 fails it; the same for M2* (d + 1) against L (c L and flat pass, c L^2 fails); the
    two-sided fit reports the exponent it recovers."""
    def verdicts(m1, m2) -> dict[str, str]:
        fits = scaling_fits(_table(m1, m2, GRID))
        h, rs, p1, _ = _inputs()
        return {c.id: c.verdict for c in resolve(claims(h, rs, p1, _grid(fits), PARAMS, PLANS))}, fits

    flat = lambda d, r, L: 5.0  # noqa: E731
    for law, shape, exponent in ((LAWS[1], lambda d, r, L: 3.0 * r**2, 2.0), (LAWS[1], flat, 0.0),
                                 (LAWS[1], lambda d, r, L: 3.0 * r**3, 3.0)):
        v, fits = verdicts(shape, flat)
        assert abs(fits.phase1_r.mean - exponent) < 0.1 and fits.phase1_r.lo < exponent < fits.phase1_r.hi
        assert v[law] == ("fails" if exponent == 3.0 else "holds"), (exponent, v[law])
    for shape, exponent in ((lambda d, r, L: 0.1 * L / (d + 1), 1.0), (flat, -0.0),
                            (lambda d, r, L: 1e-3 * L**2 / (d + 1), 2.0)):
        v, fits = verdicts(flat, shape)
        assert abs(fits.phase2_L.mean - exponent) < 0.1 and fits.decades_L == pytest.approx(math.log10(16))
        assert v[LAWS[2]] == ("fails" if exponent == 2.0 else "holds"), (exponent, v[LAWS[2]])


def test_kcenter_greedy_is_farthest_point_and_a_2_approximation() -> None:
    """Each new centre is the row farthest from the centres so far (numpy brute force); the greedy covering radius is
    at most twice the optimal one (every 3-subset of 12 points enumerated)."""
    from itertools import combinations

    from paperdag.papers.distill_multiindex.baselines import kcenter_greedy

    X = np.random.default_rng(5).standard_normal((12, 3))
    idx = kcenter_greedy(torch.as_tensor(X), 3, 4).tolist()
    assert idx[0] == 4 and len(set(idx)) == 3
    for k in range(1, 3):
        dist = np.min(((X[:, None] - X[idx[:k]][None]) ** 2).sum(-1), axis=1)
        assert idx[k] == int(np.argmax(dist))
    radius = lambda S: np.sqrt(np.min(((X[:, None] - X[list(S)][None]) ** 2).sum(-1), axis=1).max())  # noqa: E731
    assert radius(idx) <= 2 * min(radius(S) for S in combinations(range(12), 3)) + 1e-12


def test_search_for_several_targets_equals_one_search_per_target() -> None:
    """memory_to_target over {loose, near} gives each target the M1*, M2* and errors a search for it alone gives
    (each distilled set is a function of (cell, size) only), and the near target needs at least the loose memory."""
    from paperdag.papers.distill_multiindex.budget import memory_to_target
    from paperdag.papers.distill_multiindex.cell import Config, build_cell, error

    cfg = Config(512, 256, 256, 1.0, 1.0, 1e-4, Schedule(10, 0.05), 0.5, 64)
    cell = build_cell(0, 8, 1, 16, cfg)
    e_ref, grid = error(cell, cell.reference), [1, 2, 4, 8, 16, 32]
    tols = {"loose": 0.3, "near": 0.1}
    both = memory_to_target(cell, cfg, grid, grid, tols, e_ref)
    for name, tol in tols.items():
        alone = memory_to_target(cell, cfg, grid, grid, {name: tol}, e_ref)[name]
        assert (both[name].m1, both[name].m2, both[name].total_errors) == (alone.m1, alone.m2, alone.total_errors)
    if both["near"].memory(8) is not None:
        assert both["near"].memory(8) >= both["loose"].memory(8) or both["near"].m1 >= both["loose"].m1


def test_every_L_exponent_spans_1_2_decades_of_L() -> None:
    """The design check: a grid whose widths span less than min_decades_L of L (the old 256, 512) is rejected; the
    committed default and gpu profiles pass it."""
    from pathlib import Path

    from pydantic import ValidationError

    from paperdag.params import load_params, read_params_file
    from paperdag.papers.distill_multiindex.params import Params

    data = read_params_file(Path(__file__).parents[2] / "params.yaml")
    for profile in ("default", "gpu"):
        p = load_params(data, SLUG, Params, profile, Path("params.yaml"))
        widths = {*p.grid.widths, *(p.grid.sweep.widths if p.grid.sweep.cells else [])}
        assert math.log10(max(widths) / min(widths)) >= 1.2 and p.claims.min_decades_L == 1.2
    raw = Params.model_validate({k: v for k, v in data[SLUG].items() if k != "profiles"}).model_dump()
    raw["grid"] |= {"widths": [256, 512], "sweep": {"cells": [], "widths": [256]}}
    with pytest.raises(ValidationError, match="decades of L"):
        Params.model_validate(raw)


def test_a_longer_search_keeps_every_reached_run_and_only_continues_the_censored() -> None:
    """Extending the searched sizes (the default's 64 -> 256) changes nothing for a run that reached within the short
    grid (same M1*, M2* and errors met: each set is a function of (cell, size)), and a run censored on the short grid
    either stays censored or reaches at a size past it; the errors met at the shared sizes are identical."""
    from paperdag.papers.distill_multiindex.budget import memory_to_target
    from paperdag.papers.distill_multiindex.cell import Config, build_cell, error

    cfg = Config(512, 256, 256, 1.0, 1.0, 1e-4, Schedule(10, 0.05), 0.5, 64)
    cell = build_cell(0, 8, 1, 16, cfg)
    e_ref, short, long = error(cell, cell.reference), [1, 2, 4, 8], [1, 2, 4, 8, 16, 32]
    tols = {"loose": 1.0, "near": 0.2}
    a = memory_to_target(cell, cfg, short, short, tols, e_ref)
    b = memory_to_target(cell, cfg, long, long, tols, e_ref)
    assert {m: b["near"].phase1_errors[m] for m in a["near"].phase1_errors} == a["near"].phase1_errors
    censored = 0
    for name in tols:
        if a[name].memory(8) is not None:
            assert b[name].memory(8) == a[name].memory(8)
            assert (a[name].m1, a[name].m2, a[name].total_errors) == (b[name].m1, b[name].m2, b[name].total_errors)
        else:
            censored += 1
            assert b[name].memory(8) is None or max(b[name].m1, b[name].m2) > max(short)
            if a[name].m1 is not None and b[name].m1 == a[name].m1:
                assert {m: b[name].total_errors[m] for m in a[name].total_errors} == a[name].total_errors
    # one target reached on the short grid, the other censored there and reached past it: both branches exercised
    assert censored == 1 and b["near"].memory(8) is not None
