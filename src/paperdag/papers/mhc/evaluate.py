"""Stage ``evaluate``: summarise every cell's runs (analysis.py), compare the connections with each other and with
the trivial-baseline ladder on the same windows (Kneser-Ney n-grams and count bigrams,
paperdag.common.baselines.byte_lm), count their steps' FLOPs on the width ladder and time them at both trained widths
(benchmark.py), and write the metrics, the claims (claims.py), the figures (plots.py) and val_loss.json for ``dvc
plots``."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paperdag.claims import write_metrics
from paperdag.common.corpus import fixed_batches, load_split_tokens
from paperdag.common.ngram import bigram_cross_entropies
from paperdag.io import read_table, save_figure, write_json
from paperdag.stage import StageContext

from .analysis import Runs, comparison_metrics, mean_curve_rows, peak_gains, summarise
from .baseline import unigram_cross_entropy
from .benchmark import analytic_step_flops, connection_flop_share, flop_ladder, step_times
from .claims import Manifold, Overhead, claims
from paperdag.common.baselines.byte_lm import trivial_baselines
from .params import Params
from .plots import plot_gain, plot_grad_norms, plot_losses
from .prepare import CORPUS_FILE
from .train import EVALS_FILE, STEPS_FILE
from .training import model_configs
from .verify import MANIFOLD_FILE

PLOTS = ("gain.png", "losses.png", "grad_norms.png")
VAL_LOSS_TABLE = "val_loss.json"
TIMING_FILE = "timing.json"
KINDS = ("residual", "hc", "mhc")


def evaluate(ctx: StageContext[Params], cells: list[list[str]], depths: list[int]) -> dict[str, float]:
    """metrics.json (per connection and cell: final loss with CI, peak gain, stability; the count baselines; step
    FLOPs on the width ladder and eager step times at both trained widths; claims), the three plots, timing.json and
    val_loss.json."""
    p = ctx.params
    steps: dict[str, dict[str, pa.Table]] = {}
    evals: dict[str, dict[str, pa.Table]] = {}
    for k, cell in cells:
        steps.setdefault(k, {})[cell] = read_table(ctx.input(f"train_{k}_{cell}", STEPS_FILE))
        evals.setdefault(k, {})[cell] = read_table(ctx.input(f"train_{k}_{cell}", EVALS_FILE))
    corpus = ctx.input("prepare", CORPUS_FILE)
    train, val = (load_split_tokens(corpus, s) for s in ("train", "val"))
    unigram = unigram_cross_entropy(train, val)
    runs: dict[str, dict[str, Runs]] = {k: {c: summarise(steps[k][c], evals[k][c], p.train.warmup_steps, p.sweep,
                                                         unigram) for c in steps[k]} for k in steps}
    sweep = tuple(c for c in steps["hc"] if c.startswith("stress"))  # the stress cells (their seeds, not base's)
    depth_gain = {p.model.n_layer: runs["hc"][p.depth.cell].peak_gain[: p.depth.runs]}  # the same seeds, in order
    depth_gain |= {f * p.model.n_layer: peak_gains(read_table(ctx.input(f"train_hc_depth_x{f}", EVALS_FILE)))
                   for f in depths}
    windows = fixed_batches(val, p.train.eval_batches, p.train.batch_size, p.model.context, seed=p.seed)  # as train
    base = trivial_baselines(train, val, p.train.eval_batches, p.train.batch_size, p.model.context, p.seed,
                             heldout_seed=int(ctx.rng.integers(2**31)))  # on the same windows
    table = read_table(ctx.input("verify", MANIFOLD_FILE))
    mhc_rows = table.filter(pc.equal(table["connection"], "mhc"))

    def worst(*cols: str) -> float:
        return max(pc.max(mhc_rows[c]).as_py() for c in cols)

    manifold = Manifold(mhc_rows.num_rows - pc.sum(mhc_rows["limit_passed"].cast("int64")).as_py(), mhc_rows.num_rows,
                        worst("limit_max_row_dev", "limit_max_col_dev"), int(worst("limit_steps")),
                        p.claims.sinkhorn_cap, worst("max_row_dev", "max_col_dev"), p.model.sinkhorn_iters)

    widths = (p.model.d_model, p.model.narrow_d_model)
    model_cfg, stream_cfg = model_configs(p.model)
    timing = {w: step_times(list(KINDS), *model_configs(p.model, w), p.train, windows[0], ctx.device, p.bench_steps)
              for w in widths}
    write_json(ctx.output(TIMING_FILE), {str(w): t for w, t in timing.items()})
    n, ladder = p.model.n_streams, list(p.flop_widths)
    cost = Overhead(flop_ladder(ladder, model_cfg, stream_cfg),
                    {w: {k: analytic_step_flops(k, replace(model_cfg, d_model=w), n, model_cfg.context) for k in KINDS}
                     for w in ladder},
                    {w: connection_flop_share(n, w, model_cfg.mlp_ratio) for w in ladder})

    save_figure(plot_gain(evals, p.claims.hc_gain_min), ctx.output(PLOTS[0]))
    strongest = base.ladder().strongest
    save_figure(plot_losses({k: steps[k]["base"] for k in KINDS}, {k: evals[k]["base"] for k in KINDS}, unigram,
                            strongest.point(), strongest.name), ctx.output(PLOTS[1]))
    save_figure(plot_grad_norms({k: {c: steps[k][c] for c in ("base", *sweep)} for k in KINDS}), ctx.output(PLOTS[2]))
    write_json(ctx.output(VAL_LOSS_TABLE), mean_curve_rows({k: evals[k]["base"] for k in KINDS}, "val_loss"))

    metrics = {"unigram_val_loss": unigram, "mhc_manifold_failed_layers": manifold.failed_layers,
               "mhc_manifold_max_dev": manifold.limit_dev, "mhc_manifold_max_steps": manifold.max_steps,
               f"mhc_t{manifold.iters}_max_dev": manifold.used_dev, "mhc_flop_overhead_pct": cost.pct(p.model.d_model)}
    for w in ladder:
        metrics |= {f"{k}_flop_overhead_pct_w{w}": cost.pct(w, k) for k in ("hc", "mhc")}
        metrics[f"mhc_connection_flop_share_pct_w{w}"] = 100 * cost.share[w]
    for w, t in timing.items():
        metrics[f"mhc_step_overhead_pct_w{w}"] = 100 * (t["mhc"] / t["residual"] - 1)
        metrics |= {f"{k}_train_step_ms_w{w}": t[k] for k in KINDS}
    metrics |= comparison_metrics(runs)
    metrics |= base.metrics()
    metrics |= {f"hc_peak_gain_blocks{b}_mean": float(np.mean(g)) for b, g in depth_gain.items()}
    metrics |= {f"bigram_{s}_val_split_loss": v for s, v in bigram_cross_entropies(train, val[:-1], val[1:]).items()}
    write_metrics(ctx.out, metrics, claims(runs, sweep, base, manifold, cost, widths, p.claims, p.plans,
                                           p.train.grad_clip, depth_gain))
    return {k: float(metrics[k]) for k in ("hc_peak_gain_max", "mhc_peak_gain_max", "mhc_base_final_val_loss_mean",
                                           "residual_base_final_val_loss_mean", "hc_base_final_val_loss_mean")}
