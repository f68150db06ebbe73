"""Stage ``evaluate``: compare the optimizers' curves against AdamW (analysis.py) and against the trivial-baseline
ladder on the same validation windows (Kneser-Ney n-grams and count bigrams, paperdag.common.baselines.byte_lm),
draw the structureless references of Muon's row-norm CV (reference.py), time their steps alone (benchmark.py), and
write the metrics, the claims (claims.py), timing.json and curves.png
(plots.py)."""

from __future__ import annotations

from paperdag.claims import write_metrics
from paperdag.common.corpus import fixed_batches, load_split_tokens
from paperdag.common.ngram import bigram_cross_entropies
from paperdag.io import read_json, read_table, save_figure, write_json
from paperdag.stage import StageContext

from .analysis import compare, comparison_metrics
from .benchmark import time_optimizer
from .claims import claims
from paperdag.common.baselines.byte_lm import trivial_baselines
from .params import Params
from .plots import plot_curves
from .prepare import CORPUS_FILE
from .reference import REFERENCES, hidden_shapes, reference_row_cvs
from .runs import mean_curve_rows, run_metrics, selected_curves, selected_record
from .train import CURVES_FILE, RUNS_FILE
from .training import adamw_config, model_config, muon_config

TIMING_FILE = "timing.json"
CURVES_PLOT = "curves.png"
VAL_LOSS_TABLE = "val_loss.json"


def evaluate(ctx: StageContext[Params], optimizers: list[str]) -> dict[str, float]:
    """metrics.json (comparison, Kneser-Ney and count-bigram baselines, state sizes, step times, claims),
    timing.json, curves.png and val_loss.json (the seed-mean validation curve of each optimizer by step, for
    ``dvc plots``)."""
    p = ctx.params
    curves = {n: selected_curves(read_table(ctx.input(f"train_{n}", CURVES_FILE)).to_pydict()) for n in optimizers}
    records = {n: read_json(ctx.input(f"train_{n}", RUNS_FILE)) for n in optimizers}
    comparison = compare(curves)

    corpus = ctx.input("prepare", CORPUS_FILE)
    train, val = (load_split_tokens(corpus, s) for s in ("train", "val"))
    windows = fixed_batches(val, p.train.eval_batches, p.train.batch_size, p.model.context, seed=p.seed)  # as train
    base = trivial_baselines(train, val, p.train.eval_batches, p.train.batch_size, p.model.context, p.seed,
                             heldout_seed=int(ctx.rng.integers(2**31)))  # the same windows as train's
    shapes, ref_seed = hidden_shapes(model_config(p.model)), int(ctx.rng.integers(2**31))  # after heldout's draw
    references = {k: reference_row_cvs(shapes, p.claims.reference_draws, ref_seed, k).tolist() for k in REFERENCES}
    batch = windows[0]
    lr = {n: selected_record(records[n])["lr"] for n in optimizers}  # each optimizer's tuned rate
    configs = {n: adamw_config(p.train, p.adamw, lr[n], p.seed) if n == "adamw"
               else muon_config(p.train, p.muon, n, lr[n], p.seed) for n in optimizers}  # fmt: skip
    timing = {n: time_optimizer(model_config(p.model), cfg, batch, ctx.device, p.bench_steps)
              for n, cfg in configs.items()}  # fmt: skip
    write_json(ctx.output(TIMING_FILE), timing)
    strongest = base.ladder().strongest
    save_figure(plot_curves(curves, comparison.final["adamw"], strongest.point(), strongest.name),
                ctx.output(CURVES_PLOT))
    write_json(ctx.output(VAL_LOSS_TABLE), mean_curve_rows(curves, "val_loss"))

    metrics = comparison_metrics(comparison) | run_metrics(records)
    metrics |= {f"{n}_{k}": v for n in optimizers for k, v in timing[n].items()}
    metrics |= {f"bigram_{s}_val_split_loss": v for s, v in bigram_cross_entropies(train, val[:-1], val[1:]).items()}
    metrics |= base.metrics()
    metrics |= {f"reference_row_cv_{k.replace(' ', '_').replace('-', '_').lower()}_mean": float(sum(v) / len(v))
                for k, v in references.items()}  # fmt: skip
    write_metrics(ctx.out, metrics, claims(comparison, base, p.claims, p.plans, references))
    keys = ("normuon_step_reduction_vs_adamw_pct_mean", "muon_step_reduction_vs_adamw_pct_mean",
            "normuon_update_row_cv_mean", "muon_update_row_cv_mean")  # fmt: skip
    return {k: metrics[k] for k in keys if k in metrics}
