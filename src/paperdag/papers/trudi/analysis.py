"""The per-seed numbers the claims judge (claims.py builds the intervals with the shared rules): every configuration's
evaluation on its seeds (seed i of every method shares the torch seed, so comparisons are paired), the return drop,
the plateau rule's slope of a training curve, the epsilon sweep (per-update KL of every seed at every epsilon) and the
simulators' kernels per step call.

Trivial baseline of a simulator: the better of the zero-action and the uniform random-action policy (prepare's
specs.json); Gaussian PPO's per-seed gain over it scales the on-par margin. Competence is judged against the whole
baseline ladder (claims.py), from each configuration's per-seed stochastic returns.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

from paperdag.common.stats import Interval, mean_ci, slope_ci

UNIMODAL = ("pendulum", "reacher")
MAIN, BASE, STRESS = "main", "base", "stress"
STABILITY = ("trudi", "dppo", "final", "clip")  # the methods run at the base and the large learning rate
ABLATIONS = ("clip",)  # reported beside the claims, judged by none


def select(table: pa.Table, column: str, **where: object) -> np.ndarray:
    """``column`` of the rows matching ``where`` (e.g. env=..., method=..., setting=...), ordered by (epsilon, seed)."""
    rows = sorted((r for r in table.to_pylist() if all(r[k] == v for k, v in where.items())),
                  key=lambda r: (r["epsilon"], r["seed"]))
    if not rows:
        raise KeyError(f"no rows for {where}")
    return np.array([r[column] for r in rows], dtype=float)


def _per_seed_curves(curves: pa.Table, **where: object) -> list[list[float]]:
    """The training-return curve of every seed (ordered by seed, then iteration)."""
    rows = [r for r in curves.to_pylist() if all(r[k] == v for k, v in where.items())]
    seeds = sorted({r["seed"] for r in rows})
    return [[r["return"] for r in sorted(rows, key=lambda r: r["iteration"]) if r["seed"] == s] for s in seeds]


def return_drop(curves: pa.Table, **where: object) -> np.ndarray:
    """Per seed: max_t R_t - R_final of the training return curve (0 when the last iterate is the best)."""
    return np.array([max(f) - f[-1] for f in _per_seed_curves(curves, **where)])


def plateau_window(iterations: int, fraction: float, minimum: int) -> int:
    """The judged window of a curve of ``iterations`` points: its last max(minimum, ceil(fraction x iterations))
    iterations (all of them when the curve is shorter)."""
    return min(iterations, max(minimum, math.ceil(fraction * iterations - 1e-9)))


def plateau(curve: np.ndarray, fraction: float, minimum: int) -> dict:
    """The plateau rule's numbers for one curve (returns per iteration): over its judged window, the OLS slope of
    return on iteration with its t interval (``slope``, unit iteration) and the per-iteration noise sd, the residual
    sd of that fit sqrt(RSS / (w - 2)); a window of fewer than 3 points has no interval (nan)."""
    w = plateau_window(len(curve), fraction, minimum)
    x, y = np.arange(len(curve) - w, len(curve), dtype=float), np.asarray(curve[-w:], dtype=float)
    if w < 3:
        nan = float("nan")
        return {"window": w, "slope": Interval(nan, nan, nan, w, 0.95, "iteration", "fit"), "noise_sd": nan}
    slope = slope_ci(x, y, unit="iteration")
    resid = y - y.mean() - slope.mean * (x - x.mean())
    return {"window": w, "slope": slope, "noise_sd": float(np.sqrt(resid @ resid / (w - 2)))}


def mean_curve(curves: pa.Table, **where: object) -> np.ndarray:
    """The seed-mean training-return curve of one configuration."""
    return np.mean(_per_seed_curves(curves, **where), axis=0)


def plateaus(curves: pa.Table, budgets: list[int], fraction: float, minimum: int, **where: object) -> dict:
    """Per method compared on one simulator's main runs (TruDi, Gaussian PPO): the plateau rule's numbers at every
    declared budget up to the run's (the curve's prefix: seed i's first b iterations are its b-iteration run)."""
    out = {}
    for m in ("trudi", "gauss"):
        curve = mean_curve(curves, method=m, setting=MAIN, **where)
        out[m] = {b: plateau(curve[:b], fraction, minimum) for b in sorted({*budgets, len(curve)}) if b <= len(curve)}
    return out


def competence(evals: pa.Table) -> dict[str, dict]:
    """Per compared configuration (env/method/setting: the main and base runs and TruDi at the large learning rate,
    whose baselines are expected to fail there; not the ``clip`` ablation, which is reported and compared with
    nothing): its per-seed stochastic returns (in seed order) and simulator."""
    rows = evals.to_pylist()
    configs = sorted({(r["env"], r["method"], r["setting"]) for r in rows if r["method"] not in ABLATIONS
                      and (r["setting"] in (MAIN, BASE) or (r["setting"], r["method"]) == (STRESS, "trudi"))})
    return {"/".join(c): {"returns": select(evals, "return_stoch", env=c[0], method=c[1], setting=c[2]),
                          "seeds": select(evals, "seed", env=c[0], method=c[1], setting=c[2]).astype(int).tolist(),
                          "env": c[0]} for c in configs}


def summarise(evals: pa.Table, curves: pa.Table, throughput: pa.Table, env: dict[str, str],
              trivial: dict[str, float], rule: tuple[float, int, dict[str, list[int]]], routes: dict[str, float]) -> dict:
    """The per-seed arrays of claims.py: stress (stability), detour (multimodal), par (unimodal), plateau, sweep,
    competence, throughput, routes. ``env`` names the stress and sweep simulators, ``trivial`` each simulator's
    trivial return, ``rule`` the plateau rule's (window fraction, fewest iterations, declared budgets per simulator),
    ``routes`` the detour's scripted one-sided and split returns (prepare)."""
    def ev(column: str, **where: object) -> np.ndarray:
        return select(evals, column, **where)

    stress = {"env": env["stress"], "lr": float(ev("lr", setting=STRESS, method="dppo")[0])}
    paired = ev("seed", setting=STRESS, method="dppo")  # TruDi's further stress seeds serve its competence only
    for m in STABILITY:
        if not np.array_equal(ev("seed", setting=STRESS, method=m)[:len(paired)], paired):
            raise ValueError(f"stress seeds of {m} are not paired with the DPPO baseline's")
        stress |= {f"{k}_{m}": ev(c, setting=STRESS, method=m)[:len(paired)]
                   for k, c in (("max_kl", "max_kl"), ("mean_kl", "mean_kl"), ("return", "return_stoch"))}
        stress[f"drop_{m}"] = return_drop(curves, setting=STRESS, method=m)[:len(paired)]
    for m in ABLATIONS:  # the ablation's return at the base rate, beside (its competence is judged by no claim)
        stress[f"base_return_{m}"] = ev("return_stoch", setting=BASE, method=m)
    detour = {f"{k}_{m}": ev(c, env="detour", method=m, setting=MAIN) for m in ("trudi", "gauss")
              for k, c in (("coverage", "coverage_stoch"), ("return", "return_stoch"))}
    detour["coverage_det_trudi"] = ev("coverage_det", env="detour", method="trudi", setting=MAIN)
    par = {e: {f"{k}_{m}": ev(c, env=e, method=m, setting=MAIN) for m in ("trudi", "gauss")
               for k, c in (("return", "return_stoch"), ("mean_kl", "mean_kl"))} for e in UNIMODAL}
    for e, v in par.items():
        v["gain_gauss"] = v["return_gauss"] - trivial[e]
    fraction, minimum, budgets = rule
    flat = {e: plateaus(curves, budgets[e], fraction, minimum, env=e) for e in budgets}
    eps = sorted(set(ev("epsilon", setting="sweep").tolist()))
    kl = np.stack([ev("mean_kl", setting="sweep", epsilon=e) for e in eps])  # [epsilon, seed]
    sweep = {"env": env["sweep"], "epsilons": eps, "mean_kl": [mean_ci(k).rounded(5) for k in kl],
             "kl_increasing": bool((np.diff(kl, axis=0) > 0).all()),
             "return": [mean_ci(ev("return_stoch", setting="sweep", epsilon=e)).rounded(3) for e in eps]}
    tp = throughput.to_pylist()
    kernels = {r["env"]: set() for r in tp}
    for r in tp:
        kernels[r["env"]].add(r["kernels_per_call"])
    return {"stress": stress, "detour": detour, "par": par, "plateau": flat, "sweep": sweep,
            "competence": competence(evals),
            "routes": routes,
            "throughput": {f"{r['env']}@{r['n_envs']}": {"kernels": r["kernels_per_call"],
                                                          "per_env_step": r["kernels_per_env_step"]} for r in tp},
            "throughput_constant": all(len(k) == 1 for k in kernels.values())}
