"""Stage ``evaluate``: compare the connections' runs (analysis.py) with each other and with the count bigram
(paperdag.common.ngram), time and count their steps (benchmark.py), and write the metrics, the claims (claims.py),
the figures (plots.py) and val_loss.json for ``dvc plots``."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from paperdag.claims import write_metrics
from paperdag.common.corpus import fixed_batches, load_split_tokens
from paperdag.common.ngram import bigram_cross_entropies, window_pairs
from paperdag.io import read_table, save_figure, write_json
from paperdag.stage import StageContext

from .analysis import comparison_metrics, mean_curve_rows, summarise
from .baseline import unigram_cross_entropy
from .benchmark import map_flop_share, step_times
from .claims import Baselines, Overhead, claims
from .params import Params
from .plots import plot_gain, plot_grad_norms, plot_losses
from .prepare import CORPUS_FILE
from .train import EVALS_FILE, STEPS_FILE
from .training import model_configs
from .verify import MANIFOLD_FILE

PLOTS = ("gain.png", "losses.png", "grad_norms.png")
VAL_LOSS_TABLE = "val_loss.json"
TIMING_FILE = "timing.json"


def evaluate(ctx: StageContext[Params], connections: list[str], runs: int) -> dict[str, float]:
    """metrics.json (per connection: final loss with CI, peak gain, spikes, step time, FLOPs; the count baselines;
    claims), the three plots, timing.json and val_loss.json."""
    p = ctx.params
    steps, evals = ({k: pa.concat_tables([read_table(ctx.input(f"train_{k}_{r}", name)) for r in range(runs)])
                     for k in connections} for name in (STEPS_FILE, EVALS_FILE))
    c = {k: summarise(steps[k], evals[k], p.spikes) for k in connections}
    corpus = ctx.input("prepare", CORPUS_FILE)
    train, val = (load_split_tokens(corpus, s) for s in ("train", "val"))
    unigram = unigram_cross_entropy(train, val)
    windows = fixed_batches(val, p.train.eval_batches, p.train.batch_size, p.model.context, seed=p.seed)  # as train
    bigram, bigram_split = (bigram_cross_entropies(train, *pairs) for pairs in (window_pairs(windows),
                                                                                 (val[:-1], val[1:])))
    manifold = read_table(ctx.input("verify", MANIFOLD_FILE))
    mhc_rows = manifold.filter(pc.equal(manifold["connection"], "mhc"))
    mhc_failed = mhc_rows.num_rows - pc.sum(mhc_rows["passed"].cast("int64")).as_py()
    mhc_dev = max(pc.max(mhc_rows["max_row_dev"]).as_py(), pc.max(mhc_rows["max_col_dev"]).as_py())

    batch = windows[0]
    model_cfg, stream_cfg = model_configs(p.model)
    timing = step_times(connections, model_cfg, stream_cfg, p.train, batch, ctx.device, p.bench_steps)
    write_json(ctx.output(TIMING_FILE), timing)
    overhead = 100 * (timing["mhc"]["train_step_ms"] / timing["residual"]["train_step_ms"] - 1)

    save_figure(plot_gain(evals, p.claims.hc_gain_min), ctx.output(PLOTS[0]))
    save_figure(plot_losses(steps, evals, unigram, bigram["witten_bell"]), ctx.output(PLOTS[1]))
    save_figure(plot_grad_norms(steps), ctx.output(PLOTS[2]))
    write_json(ctx.output(VAL_LOSS_TABLE), mean_curve_rows(evals, "val_loss"))

    gflops = {k: timing[k]["forward_gflops"] for k in connections}
    cost = Overhead(gflops, map_flop_share(p.model.n_streams, p.model.d_model, model_cfg.mlp_ratio), p.model.d_model)
    metrics = {"unigram_val_loss": unigram, "mhc_manifold_failed_layers": mhc_failed,
               "mhc_manifold_max_dev": mhc_dev, "mhc_step_overhead_pct": overhead,
               "mhc_flop_overhead_pct": 100 * (gflops["mhc"] / gflops["residual"] - 1),
               "mhc_map_flop_share_pct": 100 * cost.map_share} | comparison_metrics(c, timing)
    metrics |= {f"bigram_{s}_val_loss": v for s, v in bigram.items()}
    metrics |= {f"bigram_{s}_val_split_loss": v for s, v in bigram_split.items()}
    base = Baselines(bigram["witten_bell"], bigram["add_one"], unigram)
    write_metrics(ctx.out, metrics, claims(c, base, mhc_failed, mhc_dev, cost, p.claims))
    return {k: float(metrics[k]) for k in ("hc_peak_gain_max", "mhc_peak_gain_max", "mhc_final_val_loss_mean",
                                           "residual_final_val_loss_mean", "hc_final_val_loss_mean")}
