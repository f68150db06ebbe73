"""Stage ``evaluate``: rates, envelope and tail verdicts, the x^4 comparison, the claims and the figures."""

from __future__ import annotations

import math

import pyarrow as pa

from paperdag.claims import write_metrics
from paperdag.io import load_tensors, read_json, read_table, save_figure, write_table
from paperdag.stage import StageContext

from .claims import claims
from .params import Params
from .plots import plot_quartic, plot_tails, plot_w1
from .prepare import SETTINGS_FILE
from .problems import Problem
from .summary import QUARTIC, by_target, local_rate, measure, target_rows
from .train import SAMPLES_FILE, STEADY_FILE
from .verify import CHECKS_FILE, DISTANCES_FILE, TAILS_FILE


def evaluate(ctx: StageContext[Params], settings: list[str]) -> dict[str, float]:
    """metrics.json (claims), rates.parquet (slope and CI per setting) and the three figures."""
    p = ctx.params
    dist = pa.concat_tables([read_table(ctx.input(f"verify_{s}", DISTANCES_FILE)) for s in settings])
    tails = {s: read_table(ctx.input(f"verify_{s}", TAILS_FILE)) for s in settings}
    checks = pa.concat_tables([read_table(ctx.input(f"verify_{s}", CHECKS_FILE)) for s in settings])
    problems = read_json(ctx.input("prepare", SETTINGS_FILE))
    m = measure(dist, tails, checks, Problem.from_json(problems["linear_markov"]), p.analysis.projections,
                p.analysis.floor_ratio)
    rates = [dict(setting=s, **vars(r)) for s, r in m.rates.items()]
    write_table(ctx.output("rates.parquet"), pa.Table.from_pylist(
        rates + [dict(setting="quartic_var_x", **vars(m.quartic_var_rate))]))
    save_figure(plot_w1(by_target(dist), m.rates), ctx.output("w1_vs_alpha.png"))
    save_figure(plot_tails({s: t for s, t in tails.items() if t.num_rows}), ctx.output("tails.png"))
    steady = read_json(ctx.input(f"train_{QUARTIC}", STEADY_FILE))["stepsizes"]
    y = load_tensors(ctx.input(f"train_{QUARTIC}", SAMPLES_FILE))[f"y_{len(steady) - 1}"].double().numpy()[:, 0]
    sigma = problems[QUARTIC]["coef"]["sigma"]
    best = target_rows(dist, QUARTIC, "best_gaussian")
    save_figure(plot_quartic(y, steady[-1]["alpha"], sigma, float(best["scale"][-1]),
                             target_rows(dist, QUARTIC, "gibbs"),
                             best), ctx.output("quartic.png"))
    local = {s: local_rate(target_rows(dist, s, "gaussian"), p.analysis.floor_ratio) for s in m.rates if s != QUARTIC}
    metrics = {f"slope_{s}": r.estimate for s, r in m.rates.items()} | {
        f"slope_3_smallest_alpha_{s}": r.estimate for s, r in local.items()} | {
        f"curvature_{s}": r.estimate for s, r in m.curvature.items()} | {
        "quartic_var_slope": m.quartic_var_rate.estimate, "max_drift": m.max_drift, "max_cov_error": m.max_cov_error,
        "markov_w1_long_run": m.markov_w1[0], "markov_w1_marginal": m.markov_w1[1],
        "quartic_w1_gibbs_smallest_alpha": m.quartic_end[0].mean,
        "quartic_w1_best_gaussian_min": m.quartic_best_resolved[0].mean,
        "markov_w1_between_limits": m.markov_limit_gap[0]}
    metrics = {k: float(v) for k, v in metrics.items() if math.isfinite(v)}  # a rate with < 3 usable stepsizes is NaN
    write_metrics(ctx.out, metrics, claims(m, p.analysis.floor_ratio, p.claims))
    return metrics
