"""From the verify tables to the claims' inputs: rates per setting, envelope verdicts, tail errors, baselines.

Tail error at a stepsize: max over levels t of |P_hat(r > t) - P_G(r > t)|. Everything else is defined in
rates.py (slopes, envelope), analysis.py (targets, checks) and claims.py (verdicts).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .analysis import PRIMARY
from .claims import Measured
from .rates import Rate, loglog_rate

QUARTIC = "quartic_rademacher"


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


def tail_error(tails: pa.Table) -> tuple[float, float]:
    """max_t |P_hat - P_G| at the largest and at the smallest stepsize."""
    a = tails["alpha"].to_numpy()
    err = np.abs(tails["empirical"].to_numpy() - tails["gaussian"].to_numpy())
    return float(err[a == a.max()].max()), float(err[a == a.min()].max())


def measure(dist: pa.Table, tails: dict[str, pa.Table], checks: pa.Table, floor_ratio: float) -> Measured:
    """The claims' inputs from the concatenated distances and checks and the per-setting tail tables."""
    settings = list(dict.fromkeys(dist["setting"].to_pylist()))
    rows = {s: target_rows(dist, s, PRIMARY["quartic"] if s == QUARTIC else "gaussian") for s in settings}
    inside = dist.filter(pc.invert(pc.is_nan(dist["envelope"])))
    markov = {t: target_rows(dist, "linear_markov", t) for t in ("gaussian", "marginal")}
    best = target_rows(dist, QUARTIC, "best_gaussian")
    q = checks.filter(pc.equal(checks["setting"], QUARTIC)).sort_by([("alpha", "descending")])
    var_boot = np.array(q["var_x_boot"].to_pylist())
    cov_err = checks["cov_error"].to_numpy()
    return Measured(
        rates={s: rate_of(r, floor_ratio) for s, r in rows.items()},
        inside_envelope={s: bool(pc.all(inside.filter(pc.equal(inside["setting"], s))["within_envelope"]).as_py())
                         for s in settings},
        tail_error={s: tail_error(t) for s, t in tails.items() if t.num_rows},
        markov_w1=(float(markov["gaussian"]["w1"][-1]), float(markov["marginal"]["w1"][-1])),
        quartic_gibbs=(float(rows[QUARTIC]["w1"][0]), float(rows[QUARTIC]["w1"][-1]),
                       float(rows[QUARTIC]["floor"][-1])),
        quartic_best_gaussian_min=float(best["w1"].min()),
        quartic_var_rate=loglog_rate(q["alpha"].to_numpy(), q["var_x"].to_numpy(), var_boot,
                                     np.zeros(q.num_rows), 1.0),
        max_drift=float(pc.max(checks["drift"]).as_py()),
        max_cov_error=float(np.nanmax(cov_err)),
    )
