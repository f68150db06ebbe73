"""The shared decision rules (paperdag.common.verdicts): each rule fed intervals on both sides of its boundary and
straddling it, the power rule's seed count against a direct computation, and preconditions gating evidence."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from paperdag.claims import counts, headline
from paperdag.common.stats import Interval, mean_ci
from paperdag.common.verdicts import (all_of, check, equivalence, evidence, exact, noninferiority, precondition,
                                      proportion_ci, resolve, seeds_needed, superiority, trend)


def iv(lo: float, hi: float, n: int = 5) -> Interval:
    return Interval((lo + hi) / 2, lo, hi, n)


@pytest.mark.parametrize(("interval", "verdict", "words"), [
    (iv(0.2, 0.4), "holds", "lies above 0.1"),
    (iv(-0.4, -0.05), "fails", "entirely on the other side of 0"),
    (iv(0.05, 0.35), "inconclusive", "straddles 0.1 (underpowered: ~"),
    (iv(-0.1, 0.1), "inconclusive", "between 0 and 0.1, a gap no number of seeds closes"),
])
def test_superiority_above_a_margin(interval, verdict, words):
    j = superiority(interval, margin=0.1)
    assert (j.verdict, j.rule) == (verdict, "superiority") and words in j.reason, j.reason


def test_superiority_below_and_with_a_smallest_effect_of_interest():
    assert superiority(iv(-0.4, -0.2), direction="below").verdict == "holds"
    assert superiority(iv(0.1, 0.3), direction="below").verdict == "fails"
    # below the smallest effect of interest fails even though the interval is above 0
    j = superiority(iv(0.01, 0.04), margin=0.1, sesoi=0.05)
    assert j.verdict == "fails" and "0.05" in j.reason
    assert superiority(iv(0.01, 0.04), margin=0.1).verdict == "inconclusive"
    with pytest.raises(ValueError):
        superiority(iv(0, 1), margin=0.1, sesoi=0.2)


@pytest.mark.parametrize(("interval", "verdict"), [
    (iv(-0.03, 0.005), "holds"), (iv(0.012, 0.03), "fails"), (iv(0.001, 0.024), "inconclusive"),
])
def test_noninferiority_at_most_a_margin_above(interval, verdict):
    j = noninferiority(interval, margin=0.01, what="mHC - residual")
    assert j.verdict == verdict and j.rule == "noninferiority" and "mHC - residual" in j.reason


def test_noninferiority_above_mirrors_below():
    for lo, hi in [(-0.005, 0.02), (-0.03, -0.012), (-0.024, -0.001)]:
        assert noninferiority(iv(lo, hi), margin=0.01, direction="above").verdict == \
            noninferiority(iv(-hi, -lo), margin=0.01, direction="below").verdict


@pytest.mark.parametrize(("interval", "verdict", "words"), [
    (iv(-0.004, 0.006), "holds", "inside [-0.01, 0.01]"),
    (iv(0.02, 0.05), "fails", "entirely outside"),
    (iv(-0.05, -0.02), "fails", "entirely outside"),
    (iv(0.002, 0.018), "inconclusive", "straddles a bound"),
    (iv(-0.3, 0.3), "inconclusive", "wider than [-0.01, 0.01] (underpowered"),
])
def test_equivalence_within_a_margin(interval, verdict, words):
    j = equivalence(interval, margin=0.01)
    assert j.verdict == verdict and words in j.reason, j.reason


def test_trend_is_equivalence_around_the_predicted_slope():
    assert trend(iv(0.9, 1.1), predicted=1.0, tol=0.2).verdict == "holds"
    assert trend(iv(1.5, 1.7), predicted=1.0, tol=0.2).verdict == "fails"
    j = trend(iv(1.1, 1.3), predicted=1.0, tol=0.2)
    assert j.verdict == "inconclusive" and j.rule == "trend" and "[0.8, 1.2]" in j.reason


def test_a_nan_interval_is_inconclusive_not_a_verdict():
    j = superiority(Interval(math.nan, math.nan, math.nan, 3))
    assert j.verdict == "inconclusive" and "no finite interval" in j.reason


def test_seeds_needed_is_the_smallest_n_whose_t_interval_resolves_the_mean():
    values = np.array([0.3, -0.1, 0.5, 0.2, 0.05])
    x = mean_ci(values)
    m = seeds_needed(x, x.mean)  # to resolve the mean against 0
    s = values.std(ddof=1)
    half = lambda k: stats.t.ppf(0.975, k - 1) * s / math.sqrt(k)  # noqa: E731
    assert half(m) < x.mean <= half(m - 1)
    assert f"~{m} values" in superiority(x).reason
    assert seeds_needed(Interval(1.0, 1.0, 1.0, 1), 0.5) is None  # one seed: no spread to extrapolate


def test_proportion_interval_is_clopper_pearson():
    p = proportion_ci(99, 100)
    assert p.mean == 0.99 and p.n == 100 and 0.945 < p.lo < 0.946 and p.hi > 0.9997
    assert proportion_ci(0, 10).lo == 0.0


def _pre(ok: bool):
    return precondition("learns", "the model beats a count bigram", "count bigram",
                        {"model": 2.1 if ok else 2.7, "bigram": 2.42}, ok, "model loss vs bigram loss")


@pytest.mark.parametrize("judged", [exact(True, "x"), exact(False, "x"), superiority(iv(0.2, 0.4)),
                                    superiority(iv(-0.4, -0.2)), superiority(iv(-0.1, 0.4))])
def test_evidence_with_a_failed_precondition_is_inconclusive_whatever_its_numbers(judged):
    claim = evidence("gain", "A beats B", "+1 pp", {"diff": 0.3}, judged, requires=["learns"])
    out = {c.id: c for c in resolve([_pre(False), claim])}
    assert out["gain"].verdict == "inconclusive"
    assert "precondition learns fails" in out["gain"].reason and "2.7" in out["gain"].reason
    assert {c.id: c for c in resolve([_pre(True), claim])}["gain"].verdict == judged.verdict


def test_the_claim_model_refuses_verdicts_without_a_rule_or_a_regime():
    with pytest.raises(TypeError, match="decision rule"):
        evidence("gain", "A beats B", "+1", 0.3, True, requires=["learns"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="requires no precondition"):
        evidence("gain", "A beats B", "+1", 0.3, exact(True, "x"), requires=[])
    with pytest.raises(ValueError, match="names no baseline"):
        precondition("learns", "the model learns", "", {"loss": 1.0}, True)
    with pytest.raises(ValueError, match="not preconditions"):
        resolve([check("inv", "an invariant", "-", 1, True),
                 evidence("gain", "A beats B", "+1", 0.3, exact(True, "x"), requires=["inv"])])
    with pytest.raises(ValueError, match="not unique"):
        resolve([check("a", "x", "-", 1, True), check("a", "y", "-", 1, True)])


def test_counts_and_headline_of_published_rows():
    rows = [c.row() for c in resolve([
        _pre(True), precondition("headroom", "an oracle beats the baseline", "oracle", {"gap": 0.0}, False, "no gap"),
        evidence("e1", "x", "-", 1, exact(True, "x"), ["learns"]),
        evidence("e2", "x", "-", 1, exact(False, "x"), ["learns"]),
        evidence("e3", "x", "-", 1, exact(True, "x"), ["learns", "headroom"]),
        check("c1", "x", "-", 1, True), check("c2", "x", "-", 1, False, "broken")])]
    n = counts(rows)
    assert (n["evidence_holding"], n["evidence_failing"], n["evidence_inconclusive"]) == (1, 1, 1)
    assert (n["checks_passing"], n["checks_total"], n["preconditions_holding"], n["preconditions_total"]) == (1, 2, 1, 2)
    assert headline(n) == "evidence 1 holds / 1 fails / 1 inconclusive; checks 1/2; preconditions 1/2"
    assert all(r["holds"] == (r["verdict"] == "holds") for r in rows)


def test_all_of_a_claim_over_parts():
    holds, fails, open_ = exact(True, "a"), exact(False, "b"), superiority(iv(-0.1, 0.4))
    j = all_of({"x": holds, "y": open_, "z": fails})
    assert j.verdict == "fails" and j.reason.startswith("3 parts (1 holds, 1 fails, 1 inconclusive): z: b")
    assert all_of({"x": holds, "y": open_}).verdict == "inconclusive"
    many = all_of({f"cell {i}": holds for i in range(5)}, quoted=2)
    assert many.verdict == "holds" and many.reason.endswith("+3 more holds")
    with pytest.raises(ValueError):
        all_of({})
