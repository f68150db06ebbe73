"""Across-seed summaries that the claims judge: per configuration means with 95% t-intervals and paired differences
on shared seeds (paperdag.common.stats), the return drop of a training curve, and the epsilon sweep's trend."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from paperdag.common.stats import mean_ci, paired_diff_ci

UNIMODAL = ("pendulum", "reacher")


def select(table: pa.Table, column: str, **where: object) -> np.ndarray:
    """``column`` of the rows matching ``where`` (e.g. env=..., method=..., setting=...), ordered by (epsilon, seed)."""
    rows = sorted((r for r in table.to_pylist() if all(r[k] == v for k, v in where.items())),
                  key=lambda r: (r["epsilon"], r["seed"]))
    if not rows:
        raise KeyError(f"no rows for {where}")
    return np.array([r[column] for r in rows], dtype=float)


def return_drop(curves: pa.Table, **where: object) -> np.ndarray:
    """Per seed: max_t R_t - R_final of the training return curve (0 when the last iterate is the best)."""
    rows = [r for r in curves.to_pylist() if all(r[k] == v for k, v in where.items())]
    seeds = sorted({r["seed"] for r in rows})
    finals = [[r["return"] for r in sorted(rows, key=lambda r: r["iteration"]) if r["seed"] == s] for s in seeds]
    return np.array([max(f) - f[-1] for f in finals])


def summarise(evals: pa.Table, curves: pa.Table, throughput: pa.Table, env: dict[str, str],
              learn_frac: float) -> dict:
    """The summaries of claims.py: stress (stability), detour (multimodal), par (unimodal), sweep, throughput,
    sanity. ``env`` names the stress and sweep simulators."""
    def ev(column: str, **where: object) -> np.ndarray:
        return select(evals, column, **where)

    stress = {"env": env["stress"], "lr": float(ev("lr", setting="stress", method="clip")[0])}
    for m in ("trudi", "clip", "final"):
        stress[f"max_kl_{m}"] = mean_ci(ev("max_kl", setting="stress", method=m))
        stress[f"drop_{m}"] = mean_ci(return_drop(curves, setting="stress", method=m))
    for m in ("clip", "final"):
        stress[f"return_diff_{m}"] = paired_diff_ci(ev("return_stoch", setting="stress", method="trudi"),
                                                    ev("return_stoch", setting="stress", method=m))
    main = {"setting": "main"}
    detour = {f"coverage_{m}": mean_ci(ev("coverage_stoch", env="detour", method=m, **main))
              for m in ("trudi", "gauss")}
    detour["coverage_trudi_det"] = mean_ci(ev("coverage_det", env="detour", method="trudi", **main))
    detour |= {f"{k}_diff": paired_diff_ci(ev(c, env="detour", method="trudi", **main),
                                           ev(c, env="detour", method="gauss", **main))
               for k, c in (("coverage", "coverage_stoch"), ("return", "return_stoch"))}
    par = {e: {"diff": paired_diff_ci(ev("return_stoch", env=e, method="trudi", **main),
                                      ev("return_stoch", env=e, method="gauss", **main)),
               "gauss_gain": float(ev("return_stoch", env=e, method="gauss", **main).mean()
                                   - ev("zero_return", env=e, method="gauss", **main)[0])} for e in UNIMODAL}
    eps = sorted(set(ev("epsilon", setting="sweep").tolist()))
    kl = [float(ev("mean_kl", setting="sweep", epsilon=e).mean()) for e in eps]
    sweep = {"env": env["sweep"], "epsilons": eps, "mean_kl": [round(k, 5) for k in kl], "kl_increasing": all(
        a < b for a, b in zip(kl, kl[1:])), "return": [mean_ci(ev("return_stoch", setting="sweep", epsilon=e)).rounded(
            3) for e in eps]}
    tp = throughput.to_pylist()
    kernels = {r["env"]: set() for r in tp}
    for r in tp:
        kernels[r["env"]].add(r["kernels_per_call"])
    sanity = {}
    for e in sorted(set(evals["env"].to_pylist())):
        configs = {(r["method"], r["setting"]) for r in evals.to_pylist() if r["env"] == e and r["setting"] in
                   ("main", "base")}
        gain = {c: float(ev("return_stoch", env=e, method=c[0], setting=c[1]).mean()
                         - ev("zero_return", env=e, method=c[0], setting=c[1])[0]) for c in configs}
        best = max(gain.values())
        sanity |= {f"{e}/{c[0]}/{c[1]}": best > 0 and g >= learn_frac * best for c, g in sorted(gain.items())}
    return {"stress": stress, "detour": detour, "par": par, "sweep": sweep, "sanity": sanity,
            "throughput": {f"{r['env']}@{r['n_envs']}": {"kernels": r["kernels_per_call"],
                                                          "steps_per_s": round(r["steps_per_second"])} for r in tp},
            "throughput_constant": all(len(k) == 1 for k in kernels.values())}
