"""Stage ``evaluate``: rate models, the explicit bound, tails, the x^4 comparison against its trivial Gaussians,
stationarity with Monte-Carlo intervals (from every setting's final states), the claims and the figures."""

from __future__ import annotations

import math

import pyarrow as pa

from paperdag.claims import write_metrics
from paperdag.io import load_tensors, read_json, read_table, save_figure, write_table
from paperdag.stage import StageContext

from .claims import claims
from .exact import EXACT_FILE
from .params import Params
from .plots import plot_bound, plot_quartic, plot_tails, plot_w1
from .prepare import SETTINGS_FILE
from .probe import PROBE_FILE
from .problems import Problem
from .summary import QUARTIC, by_target, measure, target_rows
from .train import SAMPLES_FILE, STEADY_FILE
from .verify import CHECKS_FILE, DISTANCES_FILE, TAILS_FILE


def evaluate(ctx: StageContext[Params], settings: list[str], planar: list[str], probed: list[str]) -> dict[str, float]:
    """metrics.json (claims), rates.parquet (slopes and two-term fits), bound.parquet and the four figures."""
    p = ctx.params
    dist = pa.concat_tables([read_table(ctx.input(f"verify_{s}", DISTANCES_FILE)) for s in settings])
    tails = {s: read_table(ctx.input(f"verify_{s}", TAILS_FILE)) for s in settings}
    checks = pa.concat_tables([read_table(ctx.input(f"verify_{s}", CHECKS_FILE)) for s in settings])
    exact = {s: read_table(ctx.input(f"exact_{s}", EXACT_FILE)) for s in planar}
    probes = {s: read_json(ctx.input(f"probe_{s}", PROBE_FILE)) for s in probed}
    raw = read_json(ctx.input("prepare", SETTINGS_FILE))
    problems = {s: Problem.from_json(d) for s, d in raw.items()}
    samples = {}
    for s in settings:
        states = load_tensors(ctx.input(f"train_{s}", SAMPLES_FILE))
        steps = read_json(ctx.input(f"train_{s}", STEADY_FILE))["stepsizes"]
        samples[s] = [(st["alpha"], states[f"y_{i}"].double().numpy()) for i, st in enumerate(steps)]
    m = measure(dist, tails, checks, problems, exact, probes, samples, p.analysis.projections, p.analysis.floor_ratio,
                p.fit.min_points, p.claims.tail_low, p.claims.tail_high, p.analysis.bootstrap, ctx.rng)
    fits = {s: t for s, t in m.two_term.items() if t is not None}
    write_table(ctx.output("rates.parquet"), pa.Table.from_pylist(
        [dict(setting=s, fit="loglog", estimate=r.mean, lo=r.lo, hi=r.hi, points=r.n)
         for s, r in [*m.rates.items(), ("quartic_var_x", m.quartic_var_rate)]]
        + [dict(setting=s, fit="loglog_window", estimate=r.mean, lo=r.lo, hi=r.hi, points=r.n)
           for s, r in m.local.items()]
        + [dict(setting=s, fit="loglog_w1_over_bound", estimate=r.mean, lo=r.lo, hi=r.hi, points=r.n)
           for s, r in m.bound_ratio.items()]
        + [dict(setting=s, fit=name, estimate=c.mean, lo=c.lo, hi=c.hi, points=t.points)
           for s, t in fits.items() for name, c in (("c_half", t.c_half), ("c_one", t.c_one), ("lead", t.lead))]))
    write_table(ctx.output("bound.parquet"), pa.Table.from_pylist(
        [dict(setting=s, alpha=b.alpha, w1=b.w1.mean, w1_lo=b.w1.lo, w1_hi=b.w1.hi, bound=b.bound, trivial=b.trivial,
              t1=b.terms[0], t2=b.terms[1], t3=b.terms[2]) for s, rows in m.bounds.items() for b in rows]))
    save_figure(plot_w1(by_target(dist), m, exact), ctx.output("w1_vs_alpha.png"))
    save_figure(plot_bound(m.bounds), ctx.output("bound.png"))
    save_figure(plot_tails({s: t for s, t in tails.items() if t.num_rows}), ctx.output("tails.png"))
    alpha, y = samples[QUARTIC][-1]
    best = target_rows(dist, QUARTIC, "best_gaussian")
    save_figure(plot_quartic(y[:, 0], alpha, raw[QUARTIC]["coef"]["sigma"], float(best["scale"][-1]),
                             target_rows(dist, QUARTIC, "gibbs"), best), ctx.output("quartic.png"))
    metrics = {f"slope_{s}": r.mean for s, r in m.rates.items()} | {
        f"slope_window_{s}": r.mean for s, r in m.local.items()} | {
        f"slope_w1_over_bound_{s}": r.mean for s, r in m.bound_ratio.items()} | {
        f"c_half_{s}": t.c_half.mean for s, t in fits.items()} | {
        f"crossover_alpha_{s}": t.crossover for s, t in fits.items()} | {
        "min_bound_slack": min(b.bound / b.w1.mean for rows in m.bounds.values() for b in rows
                               if math.isfinite(b.bound)),
        "quartic_var_slope": m.quartic_var_rate.mean,
        "max_drift": max(x.mean for x in (*m.drift.values(), *m.probe_drift.values())),
        "max_cov_error": max(x.mean for x in m.cov_error.values()),
        "markov_w1_long_run": m.markov_w1[0], "markov_w1_marginal": m.markov_w1[1],
        "quartic_w1_gibbs_smallest_alpha": m.quartic_end[0].mean,
        "quartic_w1_best_gaussian_min": m.quartic_best_resolved[0].mean,
        "markov_w1_between_limits": m.markov_limit_gap[0]}
    metrics = {k: float(v) for k, v in metrics.items() if math.isfinite(v)}  # NaN: a rate or fit without its points
    write_metrics(ctx.out, metrics, claims(m, p.analysis.floor_ratio, p.claims, p.fit.min_points, p.plans))
    return metrics
