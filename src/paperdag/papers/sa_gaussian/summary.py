"""From the verify, exact, probe and train outputs to the claims' inputs: rates per setting and their models, the
explicit bound beside the measured W1, tails, baselines and stationarity.

Intervals here come from the bootstrap replicates of verify (chains and limit draws resampled at every stepsize;
unit ``kilochain``, stationarity.over_chains): a W1 value v with replicates b has the normal bootstrap interval
v +- 1.96 sd(b) (``boot_interval``, as rates.py does for fits); a ratio a / b of two independently bootstrapped
distances has the delta-method interval exp(log(a / b) +- 1.96 sqrt((sd_a / a)^2 + (sd_b / b)^2)) (``ratio_interval``).
The MC floor is drawn afresh at every stepsize from the same limit law and sample size: its draws over the sweep give
a t-interval (unit ``draw``, ``floor_interval``).
The x^4 setting's trivial baselines (the ladder): the W1-optimal centred Gaussian of verify and the moment-matched
centred Gaussian N(0, E y^2) (``moment_matched``: W1 to a fresh sample of it, with its bootstrap replicates).
Closed-form W1 of an exactly Gaussian steady state (linear field, Gaussian noise: y ~ N(0, S_alpha), S_alpha from the
discrete Lyapunov equation, problems.stepsize_covariance): along a unit direction u,
W1(N(0, u^T S1 u), N(0, u^T S2 u)) = sqrt(2 / pi) |sqrt(u^T S1 u) - sqrt(u^T S2 u)|, averaged over the sliced W1's
directions (``gaussian_w1``; exact W1 in 1-D). It gives the distance between the two candidate limits of the
Markovian setting (``limit_gap``) and the positive control of the O(alpha) rate.
Tail error at a stepsize: max over levels t of |P_hat(r > t) - P_G(r > t)|, with the Monte-Carlo standard error
of P_hat at the maximising level (``tail_errors``): a normal interval over the chains.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paperdag.common.stats import Interval, mean_ci

from .analysis import PRIMARY
from .bound import constants, content_threshold, evaluate_bound
from .claims import GAUSSIAN_LINEAR, HALF_RATE, Bounded, Measured
from .distance import bootstrap_w1, directions, w1
from .problems import Problem, exact_at_stepsize, limit_covariance, stepsize_covariance
from .rates import Z95, loglog_rate, two_term
from .stationarity import covariance_interval, drift_interval, moment_se, over_chains

QUARTIC = "quartic_rademacher"
RUNGS = {"best_gaussian": "W1-optimal centred Gaussian", "moment_matched": "moment-matched centred Gaussian"}


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


def rate_of(rows: dict[str, np.ndarray], floor_ratio: float) -> Interval:
    """Log-log slope of W1 vs alpha with its bootstrap CI (rates.loglog_rate)."""
    return loglog_rate(rows["alpha"], rows["w1"], rows["boot"], rows["floor"], floor_ratio)


def local_rate(rows: dict[str, np.ndarray], floor_ratio: float, points: int) -> Interval:
    """The slope over the declared window, every usable stepsize (W1 >= floor_ratio x floor); no interval (NaN,
    n = the usable stepsizes) with fewer than ``points`` of them."""
    use = np.flatnonzero(rows["w1"] >= floor_ratio * rows["floor"])
    if len(use) < points:
        return Interval(math.nan, math.nan, math.nan, len(use), 0.95, "stepsize", "fit")
    return loglog_rate(rows["alpha"][use], rows["w1"][use], rows["boot"][use], rows["floor"][use], floor_ratio)


def window_edge(rows: dict[str, np.ndarray], floor_ratio: float) -> int:
    """The index of the smallest stepsize of the declared window (the last with W1 >= floor_ratio x floor; the
    sweep's smallest when none is)."""
    use = np.flatnonzero(rows["w1"] >= floor_ratio * rows["floor"])
    return int(use[-1]) if len(use) else len(rows["w1"]) - 1


def bound_ratio_rate(pr: Problem, rows: dict[str, np.ndarray], floor_ratio: float, points: int) -> Interval:
    """Log-log slope of W1 / bound over the declared window (every usable stepsize where the bound is finite), the
    bound a constant per stepsize (bound.py), so the replicates are W1's divided by it; NaN with fewer than
    ``points`` stepsizes."""
    b = np.array([evaluate_bound(constants(pr), float(a)).value for a in rows["alpha"]])
    use = np.isfinite(b) & (rows["w1"] >= floor_ratio * rows["floor"])
    if use.sum() < points:
        return Interval(math.nan, math.nan, math.nan, int(use.sum()), 0.95, "stepsize", "fit")
    return loglog_rate(rows["alpha"][use], rows["w1"][use] / b[use], rows["boot"][use] / b[use, None],
                       rows["floor"][use] / b[use], floor_ratio)


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


def boot_interval(value: float, boot: np.ndarray, chains: int) -> Interval:
    """value +- 1.96 sd of its bootstrap replicates, over ``chains`` chains."""
    half = Z95 * float(np.std(boot, ddof=1))
    return over_chains(value, value - half, value + half, chains, "bootstrap")


def ratio_interval(a: float, a_boot: np.ndarray, b: float, b_boot: np.ndarray, chains: int) -> Interval:
    """a / b with the delta-method interval of log(a / b) from the two independent bootstraps (module docstring)."""
    sd = float(np.hypot(np.std(a_boot, ddof=1) / a, np.std(b_boot, ddof=1) / b))
    r = a / b
    return over_chains(r, r * float(np.exp(-Z95 * sd)), r * float(np.exp(Z95 * sd)), chains, "bootstrap")


def floor_interval(rows: dict[str, np.ndarray], floor_ratio: float) -> Interval:
    """floor_ratio x the MC floor with its t-interval over its draws at the sweep's stepsizes (module docstring)."""
    return mean_ci(floor_ratio * rows["floor"], unit="draw")


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


def tail_decay(tails: pa.Table, chains: int, low: list[float], high: list[float]) -> dict[str, Interval]:
    """At the smallest stepsize, per pair (t_lo in ``low``, t_hi in ``high``): the tail error at t_lo minus at t_hi,
    |P_hat - P_G|, with the normal MC 95% interval from the two levels' standard errors, over ``chains`` chains."""
    a = tails["alpha"].to_numpy()
    at = a == a.min()
    t = tails["t"].to_numpy()[at]
    err = np.abs(tails["empirical"].to_numpy() - tails["gaussian"].to_numpy())[at]
    se = tails["se"].to_numpy()[at]
    level = {float(x): i for i, x in enumerate(t)}
    out = {}
    for lo in low:
        for hi in high:
            i, j = level[float(lo)], level[float(hi)]
            d, half = float(err[i] - err[j]), Z95 * float(np.hypot(se[i], se[j]))
            out[f"t={lo:g} vs t={hi:g}"] = over_chains(d, d - half, d + half, chains, "given")
    return out


def tail_intervals(tails: pa.Table, chains: int) -> tuple[Interval, Interval]:
    """The tail error at the largest stepsize and its drop to the smallest stepsize, with MC 95% intervals over
    ``chains`` chains."""
    e = tail_errors(tails)
    (big, se_big), (small, se_small) = e["largest"], e["smallest"]
    gap, half = big - small, Z95 * float(np.hypot(se_big, se_small))
    return (over_chains(big, big - Z95 * se_big, big + Z95 * se_big, chains, "given"),
            over_chains(gap, gap - half, gap + half, chains, "given"))


def limit_gap(pr: Problem, projections: int) -> float:
    """Closed-form sliced W1 between N(0, Sigma_LR) and N(0, Sigma_marginal) over the sliced W1's directions."""
    marginal = limit_covariance(np.array(pr.jacobian), np.array(pr.noise_cov))
    return gaussian_w1(np.array(pr.sigma), marginal, directions(pr.dim, projections))


def exact_intervals(exact: pa.Table, key: str = "w1") -> list[Interval]:
    """The exact W1 of the groups (``key`` "floor": its floor) with its t-interval over the groups per stepsize
    of an exact stage's table, alphas decreasing."""
    e = exact.sort_by([("alpha", "descending")])
    return [Interval(w, lo, hi, int(n), 0.95, "subsample") for w, lo, hi, n in
            zip(*(e[k].to_pylist() for k in (key, f"{key}_lo", f"{key}_hi", "repeats")), strict=True)]


def bounds(problems: dict[str, Problem], rows: dict[str, dict[str, np.ndarray]], exact: dict[str, pa.Table],
           probes: dict[str, dict], chains: dict[str, int]) -> tuple[dict[str, list[Bounded]], dict[str, float]]:
    """Per i.i.d.-noise Gaussian-limit setting: the explicit bound beside the measured W1 at each stepsize (1-D: the
    exact W1 with its bootstrap interval; 2-D: the exact W1 of the groups with its t-interval), then at the probe's
    stepsize where there is one; and the largest stepsize of the halving ladder from the sweep's largest at which
    the bound has content."""
    out, content = {}, {}
    for s, pr in problems.items():
        if pr.noise not in ("gaussian", "skewed") or pr.drift == "quartic":
            continue
        c, r = constants(pr), rows[s]
        if pr.dim == 1:
            w = [boot_interval(v, b, chains[s]) for v, b in zip(r["w1"], r["boot"], strict=True)]
        else:
            w = exact_intervals(exact[s])
        points = list(zip(r["alpha"].tolist(), w, strict=True))
        if s in probes:
            points.append((probes[s]["alpha"], Interval(*probes[s]["w1"], probes[s]["repeats"], 0.95, "subsample")))
        out[s] = [Bounded(a, w, (b := evaluate_bound(c, a)).value, b.trivial, b.terms) for a, w in points]
        content[s] = content_threshold(c, float(r["alpha"][0]))
    return out, content


def moment_matched(samples: list[np.ndarray], reps: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """W1 of each 1-D sample y (stepsizes, alphas decreasing) to a fresh sample of N(0, E y^2), with ``reps``
    bootstrap replicates: the rows of the moment-matched rung (keys w1, boot)."""
    proj, w, boot = directions(1, 1), [], []
    for y in samples:
        ref = math.sqrt(float(np.mean(y**2))) * rng.standard_normal(y.shape)
        w.append(w1(y, ref, proj))
        boot.append(bootstrap_w1(y, ref, proj, reps, rng))
    return {"w1": np.array(w), "boot": np.array(boot)}


def _gain(rung: dict[str, np.ndarray], gibbs: dict[str, np.ndarray], chains: int) -> list[Interval]:
    """W1 to a rung - W1 to Gibbs per stepsize, +- 1.96 sd of the replicates' differences."""
    return [boot_interval(float(b - g), bb - gb, chains)
            for b, g, bb, gb in zip(rung["w1"], gibbs["w1"], rung["boot"], gibbs["boot"], strict=True)]


def _quartic(rows: dict[str, np.ndarray], best: dict[str, np.ndarray], matched: dict[str, np.ndarray],
             floor_ratio: float, chains: int) -> dict:
    """The x^4 setting's fields of Measured: Gibbs W1 shrinking to its floor, the trivial Gaussians against it."""
    shrink = float(rows["w1"][0] - rows["w1"][-1])
    half = Z95 * float(np.hypot(np.std(rows["boot"][0], ddof=1), np.std(rows["boot"][-1], ddof=1)))
    i = int(np.argmin(best["w1"]))
    rungs = {"best_gaussian": best, "moment_matched": matched}
    return {"quartic_shrink": over_chains(shrink, shrink - half, shrink + half, chains, "bootstrap"),
            "quartic_end": (boot_interval(rows["w1"][-1], rows["boot"][-1], chains),
                            floor_ratio * float(rows["floor"][-1])),
            "quartic_rungs": {RUNGS[k]: float(np.mean(r["w1"])) for k, r in rungs.items()},
            "quartic_gain": {RUNGS[k]: _gain(r, rows, chains) for k, r in rungs.items()},
            "quartic_best_ratio": ratio_interval(best["w1"][i], best["boot"][i], rows["w1"][-1], rows["boot"][-1],
                                                 chains),
            "quartic_best_resolved": (boot_interval(best["w1"][i], best["boot"][i], chains),
                                      floor_ratio * float(best["floor"][i]))}


def chain_plan(pr: Problem) -> str:
    """The name of the plan of a setting's chains (params.Plans)."""
    return "chains_quartic" if pr.drift == "quartic" else "chains_1d" if pr.dim == 1 else "chains_2d"


def stationarity(checks: pa.Table, problems: dict[str, Problem], samples: dict[str, list[tuple[float, np.ndarray]]],
                 chains: dict[str, int], reps: int, rng: np.random.Generator) -> tuple[dict, dict]:
    """Per "setting alpha=a": the drift interval (verify's drift, the standard error from the final states), and
    where the stepsize covariance is exact the covariance error's bootstrap interval (stationarity.py)."""
    drift, cov = {}, {}
    for s, states in samples.items():
        pr, t = problems[s], checks.filter(pc.equal(checks["setting"], s))
        by_alpha = dict(zip(t["alpha"].to_pylist(), t["drift"].to_pylist(), strict=True))
        for alpha, y in states:
            key = f"{s} alpha={alpha:g}"
            drift[key] = drift_interval(by_alpha[alpha], moment_se(y), chains[s])
            if exact_at_stepsize(pr):
                exact = stepsize_covariance(np.array(pr.jacobian), np.array(pr.noise_cov), alpha)
                cov[key] = covariance_interval(y, exact, reps, rng)
    return drift, cov


def measure(dist: pa.Table, tails: dict[str, pa.Table], checks: pa.Table, problems: dict[str, Problem],
            exact: dict[str, pa.Table], probes: dict[str, dict], samples: dict[str, list[tuple[float, np.ndarray]]],
            projections: int, floor_ratio: float, min_points: int, tail_low: list[float], tail_high: list[float],
            reps: int, rng: np.random.Generator) -> Measured:
    """The claims' inputs from the concatenated distances and checks, the per-setting tail tables, the problems
    (limits and constants), the 2-D settings' exact W1 tables, the bound probes and the final states of
    every setting's chains per stepsize (``samples``); ``tail_low`` / ``tail_high``: the levels of the decay-in-t
    comparison; ``reps`` bootstrap replicates from ``rng``."""
    settings = list(dict.fromkeys(dist["setting"].to_pylist()))
    chains = {s: len(samples[s][0][1]) for s in settings}
    rows = {s: target_rows(dist, s, PRIMARY["quartic"] if s == QUARTIC else "gaussian") for s in settings}
    gaussian = [s for s in settings if s != QUARTIC]
    markov = problems["linear_markov"]
    mk = {t: target_rows(dist, markov.name, t) for t in ("gaussian", "marginal")}
    q = checks.filter(pc.equal(checks["setting"], QUARTIC)).sort_by([("alpha", "descending")])
    tail = {s: tail_intervals(t, chains[s]) for s, t in tails.items() if t.num_rows}
    local = {s: local_rate(rows[s], floor_ratio, min_points) for s in GAUSSIAN_LINEAR}
    usable = {s: rows[s]["alpha"][rows[s]["w1"] >= floor_ratio * rows[s]["floor"]] for s in GAUSSIAN_LINEAR}
    bounded, content = bounds(problems, rows, exact, probes, chains)
    sliced = {s: list(zip(rows[s]["alpha"].tolist(), rows[s]["w1"].tolist(),
                          (floor_ratio * rows[s]["floor"]).tolist(), exact_intervals(t),
                          (floor_ratio * f.mean for f in exact_intervals(t, "floor")), strict=True))
              for s, t in exact.items()}
    fits = {s: two_term(rows[s]["alpha"], rows[s]["w1"], rows[s]["boot"], rows[s]["floor"], floor_ratio, min_points)
            for _, group in HALF_RATE.values() for s in group}
    exact_1d = [s for s in gaussian if problems[s].dim == 1 and problems[s].noise in ("gaussian", "skewed")]
    edge = {s: window_edge(rows[s], floor_ratio) for s in gaussian}
    window = {s: [(float(a), boot_interval(v, b, chains[s]), floor_ratio * float(f))
                  for a, v, b, f in zip(rows[s]["alpha"], rows[s]["w1"], rows[s]["boot"], rows[s]["floor"],
                                        strict=True) if a in t.alphas] for s, t in fits.items() if t is not None}
    drift, cov = stationarity(checks, problems, samples, chains, reps, rng)
    matched = moment_matched([y[:, :1] for _, y in samples[QUARTIC]], reps, rng)
    return Measured(
        chains={s: chain_plan(problems[s]) for s in settings},
        rates={s: rate_of(r, floor_ratio) for s, r in rows.items()},
        two_term=fits, window=window,
        local=local,
        exact_local={s: closed_form_slope(problems[s], usable[s], projections) for s in GAUSSIAN_LINEAR},
        smallest_w1={s: boot_interval(rows[s]["w1"][k], rows[s]["boot"][k], chains[s]) for s, k in edge.items()},
        resolution={s: floor_ratio * float(rows[s]["floor"][k]) for s, k in edge.items()},
        resolved_alpha={s: float(rows[s]["alpha"][k]) for s, k in edge.items()},
        bounds=bounded, content_from=content, sliced_vs_exact=sliced,
        bound_ratio={s: bound_ratio_rate(problems[s], rows[s], floor_ratio, min_points) for s in exact_1d},
        tail_decay={s: tail_decay(t, chains[s], tail_low, tail_high) for s, t in tails.items() if t.num_rows},
        tail_largest={s: t[0] for s, t in tail.items()},
        tail_gap={s: t[1] for s, t in tail.items()},
        markov_ratio=ratio_interval(mk["marginal"]["w1"][-1], mk["marginal"]["boot"][-1], mk["gaussian"]["w1"][-1],
                                    mk["gaussian"]["boot"][-1], chains[markov.name]),
        markov_w1=(float(mk["gaussian"]["w1"][-1]), float(mk["marginal"]["w1"][-1])),
        markov_limit_gap=(limit_gap(markov, projections), floor_interval(mk["gaussian"], floor_ratio)),
        **_quartic(rows[QUARTIC], target_rows(dist, QUARTIC, "best_gaussian"), matched, floor_ratio, chains[QUARTIC]),
        quartic_var_rate=loglog_rate(q["alpha"].to_numpy(), q["var_x"].to_numpy(),
                                     np.array(q["var_x_boot"].to_pylist()), np.zeros(q.num_rows), 1.0),
        drift=drift, cov_error=cov,
        probe_drift={f"{s} alpha={pb['alpha']:g}": drift_interval(pb["drift"], pb["m2_se"], pb["chains"])
                     for s, pb in probes.items()},
    )
