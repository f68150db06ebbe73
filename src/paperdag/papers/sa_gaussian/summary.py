"""From the verify tables to the claims' inputs: rates per setting, their regime, tails, envelopes and baselines.

Intervals here come from the bootstrap replicates of verify (chains and limit draws resampled at every stepsize):
a W1 value v with replicates b has the normal bootstrap interval v +- 1.96 sd(b) (``boot_interval``, as rates.py
does for slopes); a ratio a / b of two independently bootstrapped distances has the delta-method interval
exp(log(a / b) +- 1.96 sqrt((sd_a / a)^2 + (sd_b / b)^2)) (``ratio_interval``).
Regime of a rate (``curvature``): the slope over the ``window`` smallest usable stepsizes minus the slope over the
``window`` largest, refitted on each bootstrap replicate (a straight log-log line has curvature 0; a fit whose
local slope still moves is pre-asymptotic and its whole-range slope mixes regimes).
Tail error at a stepsize: max over levels t of |P_hat(r > t) - P_G(r > t)|, with the Monte-Carlo standard error
of P_hat at the maximising level (``tail_errors``).
The distance between the two candidate limits of the Markovian setting is closed form (``limit_gap``): along a
unit direction u, W1(N(0, u^T S1 u), N(0, u^T S2 u)) = sqrt(2 / pi) |sqrt(u^T S1 u) - sqrt(u^T S2 u)|, averaged
over the sliced W1's directions.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paperdag.common.stats import Interval

from .analysis import PRIMARY
from .claims import Measured
from .distance import directions
from .problems import Problem, limit_covariance
from .rates import Rate, loglog_rate

QUARTIC = "quartic_rademacher"
Z95 = 1.96


def target_rows(dist: pa.Table, setting: str, target: str) -> dict[str, np.ndarray]:
    """alpha, w1, floor, boot (stepsizes x replicates), envelope of one (setting, target), alphas decreasing."""
    t = dist.filter(pc.and_(pc.equal(dist["setting"], setting), pc.equal(dist["target"], target)))
    t = t.sort_by([("alpha", "descending")])
    out = {c: t[c].to_numpy() for c in ("alpha", "w1", "floor", "envelope", "scale")}
    return out | {"boot": np.array(t["boot"].to_pylist())}


def by_target(dist: pa.Table) -> dict[str, dict[str, dict[str, np.ndarray]]]:
    """target_rows of every (setting, target) pair present, nested by setting."""
    out: dict[str, dict[str, dict[str, np.ndarray]]] = {}
    for s, t in dict.fromkeys(zip(dist["setting"].to_pylist(), dist["target"].to_pylist(), strict=True)):
        out.setdefault(s, {})[t] = target_rows(dist, s, t)
    return out


def rate_of(rows: dict[str, np.ndarray], floor_ratio: float) -> Rate:
    """Log-log slope of W1 vs alpha with its bootstrap CI (rates.loglog_rate)."""
    return loglog_rate(rows["alpha"], rows["w1"], rows["boot"], rows["floor"], floor_ratio)


def local_rate(rows: dict[str, np.ndarray], floor_ratio: float, last: int = 3) -> Rate:
    """The slope over the ``last`` smallest stepsizes only: how close the fit is to its asymptotic regime."""
    return loglog_rate(rows["alpha"][-last:], rows["w1"][-last:], rows["boot"][-last:], rows["floor"][-last:],
                       floor_ratio)


def _slopes(log_alpha: np.ndarray, log_values: np.ndarray) -> np.ndarray:
    """Least-squares slopes of each column of log_values (points x columns) on log_alpha."""
    return np.polyfit(log_alpha, log_values, 1)[0]


def curvature(rows: dict[str, np.ndarray], floor_ratio: float, window: int = 3) -> Rate:
    """Slope over the ``window`` smallest minus over the ``window`` largest usable stepsizes (W1 >= floor_ratio x
    floor), with the normal bootstrap interval of the refits; NaN with fewer than window + 1 usable stepsizes (the
    two windows would coincide)."""
    use = rows["w1"] >= floor_ratio * rows["floor"]
    if use.sum() <= window:
        return Rate(float("nan"), float("nan"), float("nan"), int(use.sum()))
    la = np.log(rows["alpha"][use])
    lv = np.log(np.column_stack([rows["w1"][use], np.maximum(rows["boot"][use], 1e-300)]))
    diff = _slopes(la[-window:], lv[-window:]) - _slopes(la[:window], lv[:window])
    sd = float(np.std(diff[1:], ddof=1))
    return Rate(float(diff[0]), float(diff[0] - Z95 * sd), float(diff[0] + Z95 * sd), int(use.sum()))


def boot_interval(value: float, boot: np.ndarray) -> Interval:
    """value +- 1.96 sd of its bootstrap replicates."""
    half = Z95 * float(np.std(boot, ddof=1))
    return Interval(float(value), float(value) - half, float(value) + half)


def ratio_interval(a: float, a_boot: np.ndarray, b: float, b_boot: np.ndarray) -> Interval:
    """a / b with the delta-method interval of log(a / b) from the two independent bootstraps (module docstring)."""
    sd = float(np.hypot(np.std(a_boot, ddof=1) / a, np.std(b_boot, ddof=1) / b))
    r = a / b
    return Interval(r, r * float(np.exp(-Z95 * sd)), r * float(np.exp(Z95 * sd)))


def tail_errors(tails: pa.Table) -> dict[str, tuple[float, float]]:
    """(max_t |P_hat - P_G|, the standard error at the maximising level) at the largest and smallest stepsize."""
    a = tails["alpha"].to_numpy()
    err = np.abs(tails["empirical"].to_numpy() - tails["gaussian"].to_numpy())
    se = tails["se"].to_numpy()
    out = {}
    for name, at in (("largest", a.max()), ("smallest", a.min())):
        i = np.flatnonzero(a == at)[np.argmax(err[a == at])]
        out[name] = (float(err[i]), float(se[i]))
    return out


def tail_intervals(tails: pa.Table) -> tuple[Interval, Interval]:
    """The tail error at the largest stepsize and its drop to the smallest stepsize, with MC 95% intervals."""
    e = tail_errors(tails)
    (big, se_big), (small, se_small) = e["largest"], e["smallest"]
    gap, half = big - small, Z95 * float(np.hypot(se_big, se_small))
    return Interval(big, big - Z95 * se_big, big + Z95 * se_big), Interval(gap, gap - half, gap + half)


def limit_gap(pr: Problem, projections: int) -> float:
    """Closed-form sliced W1 between N(0, Sigma_LR) and N(0, Sigma_marginal) over the sliced W1's directions."""
    s_lr = np.array(pr.sigma)
    s_0 = limit_covariance(np.array(pr.jacobian), np.array(pr.noise_cov))
    u = directions(pr.dim, projections)
    sd_lr, sd_0 = (np.sqrt(np.einsum("ij,ik,kj->j", u, s, u)) for s in (s_lr, s_0))
    return float(np.sqrt(2 / np.pi) * np.abs(sd_lr - sd_0).mean())


def _quartic(rows: dict[str, np.ndarray], best: dict[str, np.ndarray], floor_ratio: float) -> dict:
    """The x^4 setting's fields of Measured: Gibbs W1 shrinking to its floor, the best Gaussian against it."""
    gain = [Interval(float(b - g), float(b - g) - Z95 * float(np.std(bb - gb, ddof=1)),
                     float(b - g) + Z95 * float(np.std(bb - gb, ddof=1)))
            for b, g, bb, gb in zip(best["w1"], rows["w1"], best["boot"], rows["boot"], strict=True)]
    shrink = float(rows["w1"][0] - rows["w1"][-1])
    half = Z95 * float(np.hypot(np.std(rows["boot"][0], ddof=1), np.std(rows["boot"][-1], ddof=1)))
    i = int(np.argmin(best["w1"]))
    return {"quartic_shrink": Interval(shrink, shrink - half, shrink + half),
            "quartic_end": (boot_interval(rows["w1"][-1], rows["boot"][-1]), floor_ratio * float(rows["floor"][-1])),
            "quartic_gibbs_gain": gain,
            "quartic_best_ratio": ratio_interval(best["w1"][i], best["boot"][i], rows["w1"][-1], rows["boot"][-1]),
            "quartic_best_resolved": (boot_interval(best["w1"][i], best["boot"][i]),
                                      floor_ratio * float(best["floor"][i]))}


def measure(dist: pa.Table, tails: dict[str, pa.Table], checks: pa.Table, markov: Problem, projections: int,
            floor_ratio: float) -> Measured:
    """The claims' inputs from the concatenated distances and checks, the per-setting tail tables and the
    Markovian setting's problem (its two candidate limits)."""
    settings = list(dict.fromkeys(dist["setting"].to_pylist()))
    rows = {s: target_rows(dist, s, PRIMARY["quartic"] if s == QUARTIC else "gaussian") for s in settings}
    gaussian = [s for s in settings if s != QUARTIC]
    inside = dist.filter(pc.invert(pc.is_nan(dist["envelope"])))
    mk = {t: target_rows(dist, markov.name, t) for t in ("gaussian", "marginal")}
    q = checks.filter(pc.equal(checks["setting"], QUARTIC)).sort_by([("alpha", "descending")])
    tail = {s: tail_intervals(t) for s, t in tails.items() if t.num_rows}
    return Measured(
        rates={s: rate_of(r, floor_ratio) for s, r in rows.items()},
        curvature={s: curvature(rows[s], floor_ratio) for s in gaussian},
        smallest_w1={s: boot_interval(rows[s]["w1"][-1], rows[s]["boot"][-1]) for s in gaussian},
        resolution={s: floor_ratio * float(rows[s]["floor"][-1]) for s in gaussian},
        inside_envelope={s: bool(pc.all(inside.filter(pc.equal(inside["setting"], s))["within_envelope"]).as_py())
                         for s in settings},
        tail_largest={s: t[0] for s, t in tail.items()},
        tail_gap={s: t[1] for s, t in tail.items()},
        markov_ratio=ratio_interval(mk["marginal"]["w1"][-1], mk["marginal"]["boot"][-1], mk["gaussian"]["w1"][-1],
                                    mk["gaussian"]["boot"][-1]),
        markov_w1=(float(mk["gaussian"]["w1"][-1]), float(mk["marginal"]["w1"][-1])),
        markov_limit_gap=(limit_gap(markov, projections), floor_ratio * float(mk["gaussian"]["floor"][-1])),
        **_quartic(rows[QUARTIC], target_rows(dist, QUARTIC, "best_gaussian"), floor_ratio),
        quartic_var_rate=loglog_rate(q["alpha"].to_numpy(), q["var_x"].to_numpy(),
                                     np.array(q["var_x_boot"].to_pylist()), np.zeros(q.num_rows), 1.0),
        max_drift=float(pc.max(checks["drift"]).as_py()),
        max_cov_error=float(np.nanmax(checks["cov_error"].to_numpy())),
    )
