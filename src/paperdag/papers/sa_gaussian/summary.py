"""From the verify, exact and prepare tables to the claims' inputs: rates per setting and their models, the explicit
bound beside the measured W1, tails and baselines.

Intervals here come from the bootstrap replicates of verify (chains and limit draws resampled at every stepsize):
a W1 value v with replicates b has the normal bootstrap interval v +- 1.96 sd(b) (``boot_interval``, as rates.py
does for fits); a ratio a / b of two independently bootstrapped distances has the delta-method interval
exp(log(a / b) +- 1.96 sqrt((sd_a / a)^2 + (sd_b / b)^2)) (``ratio_interval``).
Closed-form W1 of an exactly Gaussian steady state (linear field, Gaussian noise: y ~ N(0, S_alpha), S_alpha from the
discrete Lyapunov equation, problems.stepsize_covariance): along a unit direction u,
W1(N(0, u^T S1 u), N(0, u^T S2 u)) = sqrt(2 / pi) |sqrt(u^T S1 u) - sqrt(u^T S2 u)|, averaged over the sliced W1's
directions (``gaussian_w1``; exact W1 in 1-D). It gives the distance between the two candidate limits of the
Markovian setting (``limit_gap``) and the positive control of the O(alpha) rate.
Tail error at a stepsize: max over levels t of |P_hat(r > t) - P_G(r > t)|, with the Monte-Carlo standard error
of P_hat at the maximising level (``tail_errors``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paperdag.common.stats import Interval

from .analysis import PRIMARY
from .bound import constants, content_threshold, evaluate_bound
from .claims import GAUSSIAN_LINEAR, HALF_RATE, Bounded, Measured
from .distance import directions
from .problems import Problem, limit_covariance, stepsize_covariance
from .rates import Z95, Rate, loglog_rate, two_term

QUARTIC = "quartic_rademacher"


def target_rows(dist: pa.Table, setting: str, target: str) -> dict[str, np.ndarray]:
    """alpha, w1, floor, scale, boot (stepsizes x replicates) of one (setting, target), alphas decreasing."""
    t = dist.filter(pc.and_(pc.equal(dist["setting"], setting), pc.equal(dist["target"], target)))
    t = t.sort_by([("alpha", "descending")])
    out = {c: t[c].to_numpy() for c in ("alpha", "w1", "floor", "scale")}
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


def local_rate(rows: dict[str, np.ndarray], floor_ratio: float, points: int) -> Rate:
    """The slope over the ``points`` smallest usable stepsizes only (usable: W1 >= floor_ratio x floor)."""
    use = np.flatnonzero(rows["w1"] >= floor_ratio * rows["floor"])[-points:]
    return loglog_rate(rows["alpha"][use], rows["w1"][use], rows["boot"][use], rows["floor"][use], floor_ratio)


def gaussian_w1(s1: np.ndarray, s2: np.ndarray, proj: np.ndarray) -> float:
    """Closed-form (sliced in 2-D) W1 between N(0, s1) and N(0, s2) over the directions ``proj`` (module docstring)."""
    sd1, sd2 = (np.sqrt(np.einsum("ij,ik,kj->j", proj, s, proj)) for s in (s1, s2))
    return float(np.sqrt(2 / np.pi) * np.abs(sd1 - sd2).mean())


def closed_form_slope(pr: Problem, alphas: np.ndarray, projections: int) -> float:
    """Log-log slope of the closed-form W1(N(0, S_alpha), N(0, Sigma)) over ``alphas`` (linear field, i.i.d. noise)."""
    A, gamma, sigma = (np.array(m) for m in (pr.jacobian, pr.noise_cov, pr.sigma))
    proj = directions(pr.dim, projections)
    w = [gaussian_w1(stepsize_covariance(A, gamma, a), sigma, proj) for a in alphas]
    return float(np.polyfit(np.log(alphas), np.log(w), 1)[0]) if len(alphas) >= 2 else float("nan")


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
    marginal = limit_covariance(np.array(pr.jacobian), np.array(pr.noise_cov))
    return gaussian_w1(np.array(pr.sigma), marginal, directions(pr.dim, projections))


def exact_intervals(exact: pa.Table) -> list[Interval]:
    """The exact subsample W1 with its t-interval per stepsize of an exact stage's table, alphas decreasing."""
    e = exact.sort_by([("alpha", "descending")])
    return [Interval(*x) for x in zip(*(e[k].to_pylist() for k in ("w1", "w1_lo", "w1_hi")), strict=True)]


def bounds(problems: dict[str, Problem], rows: dict[str, dict[str, np.ndarray]], exact: dict[str, pa.Table],
           probes: dict[str, dict]) -> tuple[dict[str, list[Bounded]], dict[str, float]]:
    """Per i.i.d.-noise Gaussian-limit setting: the explicit bound beside the measured W1 at each stepsize (1-D: the
    exact W1 with its bootstrap interval; 2-D: the exact subsample W1 with its t-interval), then at the probe's
    stepsize where there is one; and the largest stepsize of the halving ladder from the sweep's largest at which
    the bound has content."""
    out, content = {}, {}
    for s, pr in problems.items():
        if pr.noise not in ("gaussian", "skewed") or pr.drift == "quartic":
            continue
        c, r = constants(pr), rows[s]
        if pr.dim == 1:
            w1 = [boot_interval(v, b) for v, b in zip(r["w1"], r["boot"], strict=True)]
        else:
            w1 = exact_intervals(exact[s])
        points = list(zip(r["alpha"].tolist(), w1, strict=True))
        if s in probes:
            points.append((probes[s]["alpha"], Interval(*probes[s]["w1"])))
        out[s] = [Bounded(a, w, (b := evaluate_bound(c, a)).value, b.trivial, b.terms) for a, w in points]
        content[s] = content_threshold(c, float(r["alpha"][0]))
    return out, content


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


def measure(dist: pa.Table, tails: dict[str, pa.Table], checks: pa.Table, problems: dict[str, Problem],
            exact: dict[str, pa.Table], probes: dict[str, dict], projections: int, floor_ratio: float,
            min_points: int, level: float) -> Measured:
    """The claims' inputs from the concatenated distances and checks, the per-setting tail tables, the problems
    (limits and constants), the 2-D settings' exact subsample W1 tables and the bound probes."""
    settings = list(dict.fromkeys(dist["setting"].to_pylist()))
    rows = {s: target_rows(dist, s, PRIMARY["quartic"] if s == QUARTIC else "gaussian") for s in settings}
    gaussian = [s for s in settings if s != QUARTIC]
    markov = problems["linear_markov"]
    mk = {t: target_rows(dist, markov.name, t) for t in ("gaussian", "marginal")}
    q = checks.filter(pc.equal(checks["setting"], QUARTIC)).sort_by([("alpha", "descending")])
    tail = {s: tail_intervals(t) for s, t in tails.items() if t.num_rows}
    local = {s: local_rate(rows[s], floor_ratio, min_points) for s in GAUSSIAN_LINEAR}
    usable = {s: rows[s]["alpha"][rows[s]["w1"] >= floor_ratio * rows[s]["floor"]][-min_points:]
              for s in GAUSSIAN_LINEAR}
    bounded, content = bounds(problems, rows, exact, probes)
    sliced = {s: list(zip(rows[s]["alpha"].tolist(), rows[s]["w1"].tolist(), exact_intervals(t), strict=True))
              for s, t in exact.items()}
    return Measured(
        rates={s: rate_of(r, floor_ratio) for s, r in rows.items()},
        two_term={s: two_term(rows[s]["alpha"], rows[s]["w1"], rows[s]["boot"], rows[s]["floor"], floor_ratio,
                              min_points, level) for _, group in HALF_RATE.values() for s in group},
        local=local,
        exact_local={s: closed_form_slope(problems[s], usable[s], projections) for s in GAUSSIAN_LINEAR},
        smallest_w1={s: boot_interval(rows[s]["w1"][-1], rows[s]["boot"][-1]) for s in gaussian},
        resolution={s: floor_ratio * float(rows[s]["floor"][-1]) for s in gaussian},
        bounds=bounded, content_from=content, sliced_vs_exact=sliced,
        tail_largest={s: t[0] for s, t in tail.items()},
        tail_gap={s: t[1] for s, t in tail.items()},
        markov_ratio=ratio_interval(mk["marginal"]["w1"][-1], mk["marginal"]["boot"][-1], mk["gaussian"]["w1"][-1],
                                    mk["gaussian"]["boot"][-1]),
        markov_w1=(float(mk["gaussian"]["w1"][-1]), float(mk["marginal"]["w1"][-1])),
        markov_limit_gap=(limit_gap(markov, projections), floor_ratio * float(mk["gaussian"]["floor"][-1])),
        **_quartic(rows[QUARTIC], target_rows(dist, QUARTIC, "best_gaussian"), floor_ratio),
        quartic_var_rate=loglog_rate(q["alpha"].to_numpy(), q["var_x"].to_numpy(),
                                     np.array(q["var_x_boot"].to_pylist()), np.zeros(q.num_rows), 1.0),
        max_drift=max(float(pc.max(checks["drift"]).as_py()), *(pb["drift"] for pb in probes.values())),
        max_cov_error=float(np.nanmax(checks["cov_error"].to_numpy())),
    )
