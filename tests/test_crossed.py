"""The crossed (seed x target) intervals: the ANOVA components against their closed form, coverage when seeds vary
(where an interval over independent cells undercovers), the one-way cases, ratios, shares and the seed projection."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from paperdag.common.crossed import (Components, components, crossed_mean_ci, crossed_proportion_ci,
                                     crossed_ratio_ci, power)
from paperdag.common.stats import cluster_mean_ci


def _long(y: np.ndarray, samples: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A grid as rows (value, seed, target), each cell's value repeated ``samples`` times."""
    s, t = np.indices(y.shape)
    rep = lambda a: np.repeat(a.ravel(), samples)  # noqa: E731
    return rep(y), rep(s), rep(t)


def test_components_match_the_two_way_anova_and_satterthwaite() -> None:
    rng = np.random.default_rng(0)
    y = rng.normal(size=(4, 9)) + rng.normal(0, 2, (4, 1)) + rng.normal(0, 1, (1, 9))
    c = components(y)
    m, r, k = y.mean(), y.mean(1) - y.mean(), y.mean(0) - y.mean()
    ms_a, ms_b = 9 * r @ r / 3, 4 * k @ k / 8
    ms_e = float(((y - m - r[:, None] - k[None, :]) ** 2).sum() / 24)
    assert c.seed == pytest.approx((ms_a - ms_e) / 9) and c.target == pytest.approx((ms_b - ms_e) / 4)
    assert c.resid == pytest.approx(ms_e)
    assert c.variance() == pytest.approx((ms_a + ms_b - ms_e) / 36)
    df = (ms_a + ms_b - ms_e) ** 2 / (ms_a**2 / 3 + ms_b**2 / 8 + ms_e**2 / 24)
    assert c.df() == pytest.approx(df)
    x = crossed_mean_ci(*_long(y, samples=5))  # samples of a cell are one cell: same interval as the grid's
    half = stats.t.ppf(0.975, df) * np.sqrt(c.variance())
    assert x.interval.n == 36 and (x.interval.lo, x.interval.hi) == pytest.approx((m - half, m + half))


def test_a_component_below_zero_is_dropped_from_the_combination() -> None:
    y = np.array([[0.0, 1.0, 0.0, 1.0], [1.0, 0.0, 1.0, 0.0]])  # no seed or target effect, all interaction
    c = components(y)
    assert c.seed == 0 and c.target == 0 and c.variance() == pytest.approx(c.resid / 8) and c.df() == pytest.approx(3)


def test_crossed_interval_covers_when_seeds_vary_and_the_cell_interval_does_not() -> None:
    """3 seeds x 13 targets with seed sd 0.1, target sd 0.05, cell noise 0.1 (about pepmirror's clashes ratio): the
    crossed 95% interval covers the mean in >= 92% of 400 draws, the CR1 interval over cells in < 85%."""
    rng = np.random.default_rng(1)
    crossed = cells = 0
    for _ in range(400):
        y = rng.normal(0, 0.1, (3, 1)) + rng.normal(0, 0.05, (1, 13)) + rng.normal(0, 0.1, (3, 13))
        x = crossed_mean_ci(*_long(y)).interval
        v, s, t = _long(y)
        c = cluster_mean_ci(v, s * 100 + t)
        crossed += x.lo < 0 < x.hi
        cells += c.lo < 0 < c.hi
    assert crossed / 400 >= 0.92 and cells / 400 < 0.85


def test_one_seed_is_a_one_way_interval_over_targets() -> None:
    y = np.array([[1.0, 2.0, 4.0, 3.0]])
    x = crossed_mean_ci(*_long(y, samples=3)).interval
    ref = stats.t.interval(0.95, 3, loc=2.5, scale=stats.sem(y.ravel()))
    assert (x.lo, x.hi) == pytest.approx(ref) and x.n == 4


def test_an_incomplete_grid_is_refused() -> None:
    with pytest.raises(ValueError, match="every seed judged on every target"):
        crossed_mean_ci([1.0, 2.0, 3.0], [0, 0, 1], ["a", "b", "a"])


def test_ratio_is_the_ratio_of_cell_means_with_a_delta_interval() -> None:
    rng = np.random.default_rng(2)
    den = 10 + rng.normal(0, 1, (3, 8))
    num = 0.9 * den + rng.normal(0, 0.5, (3, 1)) + rng.normal(0, 0.3, (3, 8))
    (a, s, t), (b, _, _) = _long(num, 4), _long(den, 4)
    x = crossed_ratio_ci(a, b, s, t)
    assert x.interval.mean == pytest.approx(num.mean() / den.mean())
    z = components((num - x.interval.mean * den) / den.mean())
    assert x.components == z and x.interval.lo < 0.9 < x.interval.hi


def test_share_is_bounded_and_all_successes_give_an_interval_below_one() -> None:
    k, m = np.full(12, 10), np.full(12, 10)
    s, t = np.repeat([0, 1, 2], 4), np.tile([0, 1, 2, 3], 3)
    x = crossed_proportion_ci(k, m, s, t).interval
    assert x.mean == 1.0 and x.hi == 1.0 and 0.9 < x.lo < 1.0 and x.method == "korn-graubard"
    k = np.array([9, 8, 9, 10, 5, 6, 5, 4, 9, 9, 8, 10])  # seed 1 learned less: the crossed df is small
    y = crossed_proportion_ci(k, m, s, t)
    assert 0 < y.interval.lo < y.interval.mean < y.interval.hi < 1 and y.components.seed > 0
    assert y.interval.df == pytest.approx(y.components.df())


def test_seeds_to_resolve_projects_the_seed_term_and_stops_at_the_target_term() -> None:
    c = Components(seeds=3, targets=13, seed=0.01, target=0.0, resid=0.13)
    v = c.variance
    assert v(12) < v(6) < v(3) and c.df(12) > c.df(3)
    x = crossed_mean_ci(*_long(np.array([[0.3, 0.33, 0.28], [-0.1, -0.13, -0.08]])))  # all spread in seeds
    need = x.seeds_to_resolve(lambda lo, hi: lo > 0)
    assert need is not None and need > 2
    stuck = crossed_mean_ci(*_long(np.array([[1.0, -1.0, 0.2], [1.0, -1.0, 0.21]])))  # all spread in targets
    assert stuck.components.target > 0 and stuck.seeds_to_resolve(lambda lo, hi: lo > 0) is None


def test_power_is_the_level_at_the_boundary_and_grows_with_seeds() -> None:
    """At a true value on the boundary the crossed interval clears it in about 2.5% of draws (its one-sided level:
    the truncation and Satterthwaite df keep it near nominal); above the boundary power grows with seeds."""
    c = Components(seeds=3, targets=13, seed=0.002, target=0.0005, resid=0.15)
    assert power(c, 6, 0.9, 0.9, draws=4000) < 0.04
    low, high = power(c, 4, 1.0, 0.9), power(c, 16, 1.0, 0.9)
    assert low < 0.5 < 0.8 < high
