"""The shared decision rules (paperdag.common.verdicts, verdict model v2): each rule fed intervals on both sides of its
boundary, straddling it, from one unit and of zero width; Holm's all_of under the null by simulation; intervals by
type against scipy; the power messages by type; plans; the baseline ladder; preconditions gating evidence."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from paperdag.claims import counts, headline
from paperdag.common.plans import FINAL_BOUNDARY, SamplePlan, required_n
from paperdag.common.stats import (Interval, bootstrap_ratio_ci, cluster_mean_ci, cluster_proportion_ci, mean_ci,
                                   paired_diff_ci, proportion_ci, slope_ci)
from paperdag.common.verdicts import (Ladder, all_of, check, equivalence, evidence, exact, noninferiority,
                                      precondition, resolve, superiority, trend, units_needed)


def iv(lo: float, hi: float, n: int = 5, unit: str = "seed") -> Interval:
    return Interval((lo + hi) / 2, lo, hi, n, unit=unit)


def plan(n: int = 5, unit: str = "seed", **kw) -> SamplePlan:
    values = dict(unit=unit, n=n, basis="budget", effect=None, power=None, pilot_n=0, pilot_sd=None, looks=1,
                  spending="none", why="the units two cores afford in the default profile")
    return SamplePlan(**(values | kw))


@pytest.mark.parametrize(("interval", "verdict", "words"), [
    (iv(0.2, 0.4), "holds", "lies above 0.1"),
    (iv(-0.4, -0.05), "fails", "entirely on the other side of 0.1 (an effect smaller than claimed)"),
    (iv(0.01, 0.09), "fails", "an effect smaller than claimed"),  # positive, but below the claimed margin
    (iv(0.05, 0.35), "inconclusive", "straddles 0.1 (underpowered: ~"),
    (iv(0.3, 0.3), "inconclusive", "zero-width interval"),
    (Interval(0.3, 0.3, 0.3, 1, unit="seed"), "inconclusive", "one seed"),
    (Interval(0.3, 0.2, 0.4, 0, unit="seed"), "inconclusive", "counts no units"),
])
def test_superiority_above_a_margin(interval, verdict, words):
    j = superiority(interval, margin=0.1, plan=plan())
    assert (j.verdict, j.rule) == (verdict, "superiority") and words in j.reason, j.reason
    assert (j.unit, j.n, j.plan) == ("seed", interval.n, plan())


def test_superiority_below_and_at_its_boundary():
    assert superiority(iv(-0.4, -0.2), direction="below").verdict == "holds"
    assert superiority(iv(0.1, 0.3), direction="below").verdict == "fails"
    j = superiority(iv(-0.2, 0.2))
    assert j.verdict == "inconclusive" and j.cause == "at the boundary" and "sits on 0" in j.reason
    assert superiority(iv(-0.1, 0.3)).cause == "underpowered"
    with pytest.raises(ValueError):
        superiority(iv(0, 1), margin=-0.1)


@pytest.mark.parametrize(("interval", "verdict"), [
    (iv(-0.03, 0.005), "holds"), (iv(0.012, 0.03), "fails"), (iv(0.001, 0.024), "inconclusive"),
    (iv(0.0, 0.0), "inconclusive"), (Interval(0.0, 0.0, 0.0, 1), "inconclusive"),
])
def test_noninferiority_at_most_a_margin_above(interval, verdict):
    j = noninferiority(interval, margin=0.01, what="mHC - residual")
    assert j.verdict == verdict and j.rule == "noninferiority" and "mHC - residual" in j.reason


def test_noninferiority_above_mirrors_below():
    for lo, hi in [(-0.005, 0.02), (-0.03, -0.012), (-0.024, -0.001)]:
        assert noninferiority(iv(lo, hi), margin=0.01, direction="above").verdict == \
            noninferiority(iv(-hi, -lo), margin=0.01, direction="below").verdict


@pytest.mark.parametrize(("interval", "verdict", "words"), [
    (iv(-0.004, 0.006), "holds", "inside [-0.01, 0.01] (two one-sided tests at 0.025 each)"),
    (iv(0.02, 0.05), "fails", "entirely outside"),
    (iv(-0.05, -0.02), "fails", "entirely outside"),
    (iv(0.002, 0.018), "inconclusive", "straddles a bound"),
    (iv(-0.3, 0.3), "inconclusive", "wider than [-0.01, 0.01] (underpowered"),
    (iv(0.0, 0.0), "inconclusive", "zero-width"),
    (Interval(0.0, 0.0, 0.0, 1), "inconclusive", "one value"),
])
def test_equivalence_within_a_margin(interval, verdict, words):
    j = equivalence(interval, margin=0.01)
    assert j.verdict == verdict and words in j.reason, j.reason


def test_trend_is_equivalence_around_the_predicted_slope_and_a_fit_asks_for_range():
    assert trend(iv(0.9, 1.1), predicted=1.0, tol=0.2).verdict == "holds"
    assert trend(iv(1.5, 1.7), predicted=1.0, tol=0.2).verdict == "fails"
    j = trend(iv(1.1, 1.3), predicted=1.0, tol=0.2)
    assert j.verdict == "inconclusive" and j.rule == "trend" and "[0.8, 1.2]" in j.reason
    fit = Interval(0.95, 0.65, 1.25, 12, unit="cell", method="fit", span=1.5)  # 0.15 from 0.8: half / 2
    j = trend(fit, predicted=1.0, tol=0.2)
    assert j.cause == "range" and "regressor range ~2x wider (now 1.5)" in j.reason and "cells at" not in j.reason


def test_a_nan_interval_is_inconclusive_not_a_verdict():
    j = superiority(Interval(math.nan, math.nan, math.nan, 3))
    assert j.verdict == "inconclusive" and "no finite interval" in j.reason and j.cause == "no interval"


def test_the_t_power_message_is_the_smallest_n_whose_interval_resolves_the_mean():
    values = np.array([0.3, -0.1, 0.5, 0.2, 0.05])
    x = mean_ci(values, unit="seed")
    m = units_needed(x, lambda lo, hi: lo > 0)
    s = values.std(ddof=1)
    half = lambda k: stats.t.ppf(0.975, k - 1) * s / math.sqrt(k)  # noqa: E731
    assert half(m) < x.mean <= half(m - 1)
    assert f"~{m} seeds at the observed spread" in superiority(x).reason
    below = mean_ci(-values, unit="seed")  # the same data claimed in the other direction needs the same seeds
    assert f"~{m} seeds at the observed spread" in superiority(below, direction="below").reason
    assert f"~{m} seeds at the observed spread" in noninferiority(below, margin=0.0).reason
    assert units_needed(Interval(1.0, 1.0, 1.0, 1), lambda lo, hi: lo > 0.5) is None


def test_the_proportion_power_message_counts_trials_at_the_observed_rate():
    x = proportion_ci(10, 10, unit="seed")
    j = superiority(x, reference=0.7)
    # Clopper-Pearson's lower bound at 10/10 is 0.025^(1/10) = 0.69 < 0.7; at m/m it is 0.025^(1/m) > 0.7 from m = 11
    assert j.verdict == "inconclusive" and "~11 seeds at the observed rate" in j.reason, j.reason
    assert stats.beta.ppf(0.025, 11, 1) > 0.7 > stats.beta.ppf(0.025, 10, 1)
    assert superiority(proportion_ci(11, 11, unit="seed"), reference=0.7).verdict == "holds"


def test_clopper_pearson_and_wilson_match_scipy_and_relevel():
    p = proportion_ci(99, 100)
    assert p.mean == 0.99 and p.n == 100 and 0.945 < p.lo < 0.946 and p.hi > 0.9997 and p.method == "clopper-pearson"
    assert proportion_ci(0, 10).lo == 0.0
    for k, n in [(3, 17), (40, 41), (0, 5)]:
        ci = stats.binomtest(k, n).proportion_ci(0.99, method="exact")
        wide = proportion_ci(k, n).at(0.99)
        assert (wide.lo, wide.hi) == pytest.approx((ci.low, ci.high))
        w = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
        assert (proportion_ci(k, n, method="wilson").lo, proportion_ci(k, n, method="wilson").hi) == \
            pytest.approx((w.low, w.high))


def test_t_intervals_relevel_through_their_quantiles():
    v = np.array([1.0, 2.5, 0.3, 1.7])
    x = mean_ci(v, unit="seed")
    wide = x.at(0.99)
    half = stats.t.ppf(0.995, 3) * v.std(ddof=1) / 2
    assert (wide.lo, wide.hi) == pytest.approx((v.mean() - half, v.mean() + half))
    assert paired_diff_ci(v, v - 1, unit="seed").method == "paired t"


def test_cluster_interval_counts_units_not_samples():
    rng = np.random.default_rng(0)
    target_effect = rng.normal(0, 1, 8)
    samples = np.repeat(target_effect, 8) + rng.normal(0, 0.1, 64)  # 8 correlated samples of each of 8 targets
    labels = np.repeat(np.arange(8), 8)
    naive = mean_ci(samples, unit="sample")
    clustered = cluster_mean_ci(samples, labels, unit="target")
    assert clustered.n == 8 and naive.n == 64 and clustered.method == "cluster t"
    assert (clustered.hi - clustered.lo) > 2 * (naive.hi - naive.lo)  # the correlated samples' interval is too narrow
    means = samples.reshape(8, 8).mean(axis=1)  # equal cluster sizes: CR1 is the t interval of the cluster means
    ref = mean_ci(means)
    assert (clustered.lo, clustered.hi) == pytest.approx((ref.lo, ref.hi))


def test_cluster_proportion_is_korn_graubard_and_counts_units():
    rng = np.random.default_rng(3)
    rates = rng.uniform(0.5, 1.0, 12)  # 8 designs of each of 12 targets share the target's rate
    outcomes = (rng.uniform(size=(12, 8)) < rates[:, None]).astype(int)
    labels = np.repeat(np.arange(12), 8)
    x = cluster_proportion_ci(outcomes.ravel(), labels, unit="target")
    # oracle, written out: CR1 variance of p, n* = p(1-p)/v, scaled by (z/t_11)^2, Clopper-Pearson at x* = p n*
    p = outcomes.mean()
    v = 12 / 11 * np.sum((outcomes.sum(axis=1) - p * 8) ** 2) / 96**2
    n = min(96, p * (1 - p) / v) * (stats.norm.ppf(0.975) / stats.t.ppf(0.975, 11)) ** 2
    ref = (stats.beta.ppf(0.025, p * n, n - p * n + 1), stats.beta.ppf(0.975, p * n + 1, n - p * n))
    assert (x.mean, x.lo, x.hi, x.n, x.method) == pytest.approx((p, *ref, 12, "korn-graubard"))
    naive = proportion_ci(int(outcomes.sum()), 96)
    assert x.hi - x.lo > naive.hi - naive.lo and 0 <= x.lo < x.hi <= 1
    copied = cluster_proportion_ci(np.repeat(outcomes, 8, axis=1).ravel(), np.repeat(labels, 8), unit="target")
    assert (copied.lo, copied.hi) == pytest.approx((x.lo, x.hi))  # copies of a target's designs add no information
    assert x.at(0.99).lo < x.lo and x.at(0.99).hi > x.hi
    assert superiority(x, reference=0.5).verdict == "holds" and units_needed(x, lambda lo, hi: hi - lo < 0.02) > 12


def test_bootstrap_ratio_is_deterministic_and_covers_the_ratio():
    rng = np.random.default_rng(1)
    a, b = rng.normal(2.0, 0.2, 12), rng.normal(1.0, 0.1, 12)
    r = bootstrap_ratio_ci(a, b, unit="seed")
    assert r == bootstrap_ratio_ci(a, b, unit="seed") and r.lo < a.mean() / b.mean() < r.hi
    assert r.at(0.99).lo < r.lo and r.method == "bootstrap"


def test_slope_ci_matches_scipy_linregress():
    x = np.array([1.0, 2, 3, 4, 5, 6])
    y = 0.5 * x + np.array([0.1, -0.2, 0.05, 0.15, -0.1, 0.0])
    fit = stats.linregress(x, y)
    s = slope_ci(x, y, unit="cell")
    half = stats.t.ppf(0.975, 4) * fit.stderr
    assert (s.mean, s.lo, s.hi, s.span, s.dof) == pytest.approx((fit.slope, fit.slope - half, fit.slope + half, 5, 4))


def test_all_of_over_null_parts_fails_at_most_at_its_level():
    """9 parts with no effect: without correction "fails" comes out ~1 - 0.975^9 = 20%; with Holm at most 2.5%."""
    rng = np.random.default_rng(2026)
    draws, parts, fails, naive = 2000, 9, 0, 0
    values = rng.normal(0.0, 1.0, (draws, parts, 10))
    for d in range(draws):
        judged = {f"p{i}": superiority(mean_ci(values[d, i], unit="seed")) for i in range(parts)}
        fails += all_of(judged).verdict == "fails"
        naive += any(j.verdict == "fails" for j in judged.values())
    mc = 3 * math.sqrt(0.025 * 0.975 / draws)  # three Monte Carlo standard errors
    assert fails / draws <= 0.025 + mc, fails / draws
    assert naive / draws > 0.15  # the uncorrected rule the review found


def test_all_of_holds_by_intersection_union_and_fails_under_holm():
    holds, fails = exact(True, "a", basis="fixed set"), exact(False, "b", basis="fixed set")
    open_ = superiority(iv(-0.1, 0.4))
    j = all_of({"x": holds, "y": open_, "z": fails})
    assert j.verdict == "fails" and "1 fail under Holm's correction over 3 parts" in j.reason and "z: b" in j.reason
    assert all_of({"x": holds, "y": open_}).verdict == "inconclusive"
    many = all_of({f"cell {i}": holds for i in range(5)}, quoted=2)
    assert many.verdict == "holds" and "intersection-union" in many.reason and many.reason.endswith("+3 more")
    # a part that fails alone at 95% but not at Holm's 1 - 0.05 / 4 level leaves the claim inconclusive
    barely = superiority(mean_ci([-0.9, -1.4, -0.2, -0.5, -1.0], unit="seed"))
    assert barely.verdict == "fails" and barely.redo(1 - 0.05 / 4).verdict == "inconclusive"
    j = all_of({"a": barely, **{f"h{i}": holds for i in range(3)}})
    assert j.verdict == "inconclusive" and "1 fail alone but none under Holm's correction over 4 parts" in j.reason
    every = all_of({f"p{i}": superiority(iv(-0.5, -0.3)) for i in range(3)})  # Holm's last step at the parts' level
    assert every.verdict == "fails" and "3 fail under Holm's correction over 3 parts" in every.reason
    with pytest.raises(ValueError):
        all_of({})


def test_sequential_boundaries_keep_the_overall_level_and_set_the_final_interval():
    rng = np.random.default_rng(0)
    for spending, table in FINAL_BOUNDARY.items():
        for looks in (2, 3):
            z = np.cumsum(rng.normal(size=(200_000, looks)), axis=1) / np.sqrt(np.arange(1, looks + 1))
            c = table[looks]
            bounds = np.full(looks, c) if spending == "pocock" else c * np.sqrt(looks / np.arange(1, looks + 1))
            rejected = (np.abs(z) > bounds).any(axis=1).mean()
            assert abs(rejected - 0.05) < 0.003, (spending, looks, rejected)
    p = plan(basis="sequential", looks=2, spending="pocock")
    assert p.confidence == pytest.approx(2 * stats.norm.cdf(2.178) - 1)
    x = mean_ci([0.5, 0.9, 0.2, 0.7, 0.4], unit="seed")
    j = superiority(x, plan=p)
    assert f"({100 * p.confidence:.3g}% CI" in j.reason  # judged on the final look's wider interval


def test_plans_refuse_inconsistent_declarations_and_power_matches_the_noncentral_t():
    for effect, sd, power in [(0.5, 1.0, 0.9), (1.0, 1.0, 0.8), (0.2, 0.5, 0.9)]:
        n = required_n(effect, sd, power)
        nc = effect / sd * math.sqrt(n)
        exact_power = 1 - stats.nct.cdf(stats.t.ppf(0.975, n - 1), n - 1, nc)
        assert exact_power >= power - 0.01, (effect, sd, power, n, exact_power)
    with pytest.raises(ValueError, match="below the"):
        plan(n=10, basis="power", effect=0.5, power=0.9, pilot_n=3, pilot_sd=1.0)
    with pytest.raises(ValueError, match="needs effect"):
        plan(basis="power")
    with pytest.raises(ValueError, match="looks > 1"):
        plan(looks=2)
    with pytest.raises(ValueError, match="plan over targets"):
        superiority(iv(0.1, 0.2, unit="seed"), plan=plan(unit="target"))


def test_the_claim_model_refuses_bools_stale_statements_and_ladders_judged_below_their_strongest():
    with pytest.raises(TypeError, match="Judgement of a decision rule"):
        evidence("gain", "A beats B", "+1", 0.3, True, requires=["learns"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="requires no precondition"):
        evidence("gain", "A beats B", "+1", 0.3, exact(True, "x", basis="fixed set"), requires=[])
    with pytest.raises(ValueError, match="no issue numbers"):
        evidence("gain", "A beats B (open issue 56)", "+1", 0.3, exact(True, "x", basis="fixed set"), requires=["learns"])
    with pytest.raises(ValueError, match="basis must be one of"):
        exact(True, "x", basis="a mean over seeds")
    lad = Ladder.of("lower", {"KN 4-gram": 1.42, "KN 3-gram": 1.84, "bigram": 2.44})
    assert lad.strongest.name == "KN 4-gram" and [r["baseline"] for r in lad.row()][:2] == ["KN 4-gram", "KN 3-gram"]
    with pytest.raises(ValueError, match="strongest rung"):
        precondition("learns", "the model beats a count n-gram", "bigram", {}, exact(True, "x", basis="fixed set"), ladder=lad)
    with pytest.raises(ValueError, match="at least 2 rungs"):
        Ladder.of("lower", {"bigram": 2.44})
    with pytest.raises(ValueError, match="names no baseline or bound"):
        precondition("learns", "the model learns", "", {"loss": 1.0}, exact(True, "x", basis="fixed set"))
    with pytest.raises(TypeError, match="Judgement of a decision rule"):
        check("inv", "an invariant", "-", 1, True)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Judgement of a decision rule"):
        precondition("learns", "the model learns", "a bound", {}, False)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="positional"):  # no v1 reason
        precondition("learns", "x", "a bound", {}, exact(True, "x", basis="fixed set"), "why")  # type: ignore[misc]
    with pytest.raises(TypeError, match="sesoi"):
        superiority(iv(0.2, 0.4), sesoi=0.1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="basis"):
        exact(True, "x")  # type: ignore[call-arg]
    for unplanned in (superiority(iv(0.2, 0.4)), superiority(Interval(0.3, 0.2, 0.4, 5), plan=None)):
        with pytest.raises(ValueError, match="without its unit and sample-size plan"):
            evidence("gain", "A beats B", "+1", 0.3, unplanned, requires=["learns"])
        with pytest.raises(ValueError, match="without its unit and sample-size plan"):
            precondition("learns", "the model learns", "a bound", {}, unplanned)
    assert check("inv", "an invariant", "-", 1, superiority(iv(0.2, 0.4))).verdict == "holds"  # checks need no plan


def _pre(ok: bool):
    lad = Ladder.of("lower", {"KN 3-gram": 2.42, "bigram": 2.6})
    return precondition("learns", "the model beats the count n-grams", "KN 3-gram",
                        {"model": 2.1 if ok else 2.7}, superiority(iv(0.1, 0.3) if ok else iv(-0.4, -0.2),
                                                                    plan=plan(), what="KN 3-gram - model"),
                        ladder=lad)


@pytest.mark.parametrize("judged", [exact(True, "x", basis="fixed set"), exact(False, "x", basis="fixed set"),
                                    superiority(iv(0.2, 0.4), plan=plan()), superiority(iv(-0.4, -0.2), plan=plan()),
                                    superiority(iv(-0.1, 0.4), plan=plan())])
def test_evidence_with_a_failed_precondition_is_inconclusive_whatever_its_numbers(judged):
    claim = evidence("gain", "A beats B", "+1 pp", {"diff": 0.3}, judged, requires=["learns"])
    out = {c.id: c for c in resolve([_pre(False), claim])}
    assert out["gain"].verdict == "inconclusive" and out["gain"].cause == "precondition"
    assert "precondition learns fails" in out["gain"].reason and "2.7" in out["gain"].reason
    assert out["gain"].reason.endswith(f"(judged alone: {judged.verdict}: {judged.reason})")  # its own numbers kept
    assert {c.id: c for c in resolve([_pre(True), claim])}["gain"].verdict == judged.verdict


def test_rows_carry_unit_n_plan_and_the_ladder():
    row = _pre(True).row()
    assert row["unit"] == "seed" and row["n"] == 5 and row["plan"]["planned_n"] == 5 and row["plan"]["looks"] == 1
    assert row["baseline"] == "KN 3-gram" and [r["baseline"] for r in row["ladder"]] == ["KN 3-gram", "bigram"]
    bound = precondition("headroom", "an oracle order beats the best fixed order", "the oracle order", {},
                         exact(True, "x", basis="enumeration")).row()
    assert bound["bound"] == "the oracle order" and "ladder" not in bound and "unit" not in bound


def test_counts_and_headline_of_published_rows():
    rows = [c.row() for c in resolve([
        _pre(True), precondition("headroom", "an oracle beats the baseline", "oracle", {"gap": 0.0},
                                 exact(False, "no gap", basis="enumeration")),
        evidence("e1", "x", "-", 1, exact(True, "x", basis="fixed set"), ["learns"]),
        evidence("e2", "x", "-", 1, exact(False, "x", basis="fixed set"), ["learns"]),
        evidence("e3", "x", "-", 1, exact(True, "x", basis="fixed set"), ["learns", "headroom"]),
        check("c1", "x", "-", 1, exact(True, "x", basis="fixed set")),
        check("c2", "x", "-", 1, exact(False, "broken", basis="fixed set"))])]
    n = counts(rows)
    assert (n["evidence_holding"], n["evidence_failing"], n["evidence_inconclusive"]) == (1, 1, 1)
    assert (n["checks_passing"], n["checks_total"], n["preconditions_holding"], n["preconditions_total"]) == (1, 2, 1, 2)
    assert headline(n) == "evidence 1 holds / 1 fails / 1 inconclusive; checks 1/2; preconditions 1/2"
    assert all(r["holds"] == (r["verdict"] == "holds") for r in rows)
    with pytest.raises(ValueError, match="not preconditions"):
        resolve([check("inv", "an invariant", "-", 1, exact(True, "x", basis="fixed set")),
                 evidence("gain", "A beats B", "+1", 0.3, exact(True, "x", basis="fixed set"), requires=["inv"])])
    with pytest.raises(ValueError, match="not unique"):
        resolve([check("a", "x", "-", 1, exact(True, "x", basis="fixed set")), check("a", "y", "-", 1, exact(True, "x", basis="fixed set"))])
