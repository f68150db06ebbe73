"""The competence trend on CPU: each optimizer's final validation loss against the Kneser-Ney ladder's strongest rung
as the training budget doubles. It shows how far the default's budget is from the regime (every optimizer below the
strongest count model) and gives a lower bound on the budget that would reach it. No stage reads it (a diagnostic:
it judges no claim).

    python -m paperdag.papers.normuon.trend [--profile default|gpu] [--jobs 2] [--out docs/trends/normuon.json]

Sizes, declared in params.yaml ``normuon.trend`` (and its profiles' overlays) before the run: one run per optimizer
and budget s in ``trend.steps`` on ``trend.seed`` (neither a judged nor a pilot seed), the profile's model, batch,
warm-up share (warmup_steps / steps) and lr schedule, each optimizer at the peak lr its pilot chose on the default
(the ``<optimizer>_chosen_lr`` of metrics/normuon.json: the lr is not re-tuned per budget or model). Corpus: the
``gpu`` profile's (the whole standard library), so that no budget here repeats a training byte. Every run is scored
on the profile's validation windows (``fixed_batches`` of this corpus' validation split with the profile's seed); the
ladder (``paperdag.common.baselines.byte_lm.trivial_baselines``) on the same windows, its order chosen on held-out
windows drawn with ``trend.seed``. ``--profile gpu`` trains the gpu profile's model at its budget on the CPU: whether
those sizes reach the bar, before a device runs them.

Reading: ``paperdag.common.trend.budget_needed`` (a lower bound on the steps that close the gap to the strongest
rung, from the last doubling).
"""

from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass

import numpy as np
import torch
from matplotlib.figure import Figure

from paperdag.common.trend import (bounds, byte_lm_bench, cli, parallel_runs, profile_corpus, scaled_schedule,
                                   trend_call, trend_figure, write_trend)
from paperdag.errors import UsageError
from paperdag.io import read_json

from .params import Params
from .pipeline import OPTIMIZERS
from .plots import COLORS
from .training import Batches, RunConfig, adamw_config, model_config, muon_config, train_run

CORPUS_PROFILE = "gpu"  # the corpus the gpu profile trains on: under one epoch at every budget of the trend


@dataclass(frozen=True)
class Point:
    """One run of the trend: its optimizer, budget, peak lr, final validation loss and wall seconds (one thread)."""

    optimizer: str
    steps: int
    lr: float
    final_val_loss: float
    seconds: float


def budget_config(p: Params, optimizer: str, lr: float, steps: int, seed: int) -> RunConfig:
    """The default's run of ``optimizer`` at peak ``lr`` scaled to ``steps``: warm-up at the default's share of the
    budget (``scaled_schedule``), one evaluation at the end."""
    t = scaled_schedule(p.train, steps)
    if optimizer == "adamw":
        return adamw_config(t, p.adamw, lr, seed)
    return muon_config(t, p.muon, optimizer, lr, seed)


def _run(p: Params, cfg: RunConfig, tokens: np.ndarray, val: Batches) -> Point:
    """One trend run on one CPU thread (the stages' setting), timed."""
    torch.set_num_threads(1)
    start = time.perf_counter()
    result = train_run(model_config(p.model), cfg, tokens, val, "cpu", lambda *_: None)
    return Point(cfg.optimizer, cfg.steps, cfg.lr, result.val_loss[-1], time.perf_counter() - start)


def trend(p: Params, profile: str, corpus: dict[str, list], lrs: dict[str, float], jobs: int) -> dict:
    """Every run of the trend (``Point``) at the sizes of ``p`` (the params of ``profile``), the ladder on the scored
    windows and, per optimizer, ``budget_needed`` against the strongest rung with the seconds per step of its largest
    budget."""
    t = p.train
    train, val, windows, base = byte_lm_bench(corpus, t.eval_batches, t.batch_size, p.model.context, p.seed,
                                              p.trend.seed)
    configs = [budget_config(p, o, lrs[o], s, p.trend.seed) for s in sorted(p.trend.steps) for o in OPTIMIZERS]
    points = parallel_runs(_run, [(p, cfg, train, windows) for cfg in configs], jobs,
                           lambda pt: f"{pt.optimizer:8s} {pt.steps:6d} steps  lr {pt.lr:g}  val "
                                      f"{pt.final_val_loss:.4f}  {pt.seconds:.0f} s")  # fmt: skip
    bar = base.ladder().strongest
    needed = bounds({o: [(pt.steps, pt.final_val_loss, pt.seconds) for pt in points if pt.optimizer == o]
                     for o in OPTIMIZERS}, bar.point())  # fmt: skip
    return {"points": [asdict(pt) for pt in points], "ladder": base.metrics(), "bar": {bar.name: bar.point()},
            "profile": profile, "needed": needed, "train_bytes": int(len(train)), "val_bytes": int(len(val)),
            "bytes_per_step": t.batch_size * p.model.context, "seed": p.trend.seed, "lr": lrs}  # fmt: skip


def plot_trend(result: dict) -> Figure:
    """``trend_figure`` of a ``trend`` result: each optimizer's final loss by budget, the KN 5-, 4- and 3-gram."""
    mine = {o: [pt for pt in result["points"] if pt["optimizer"] == o] for o in OPTIMIZERS}
    curves = {f"{o} (lr {result['lr'][o]:g})": ([pt["steps"] for pt in pts], [pt["final_val_loss"] for pt in pts])
              for o, pts in mine.items()}  # fmt: skip
    rungs = {f"KN {k}-gram": result["ladder"][f"kn{k}_val_loss"] for k in (5, 4, 3)}
    return trend_figure(curves, COLORS, rungs, f"NorMuon, {result['profile']} sizes: competence against the count "
                        "ladder (CPU)", f"training steps (x {result['bytes_per_step']:,} bytes), one seed")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    call = trend_call("normuon", __doc__, argv)
    published = call.project.root / "metrics" / "normuon.json"
    if not published.is_file():
        raise UsageError(f"no {published}: the trend runs each optimizer at the lr its pilot chose on the default; "
                         "run `paperdag run normuon` first")  # fmt: skip
    chosen = read_json(published)["metrics"]
    lrs = {o: float(chosen[f"{o}_chosen_lr"]) for o in OPTIMIZERS}
    result = trend(call.params, call.profile, profile_corpus(call, CORPUS_PROFILE), lrs, call.jobs)
    write_trend(call.out, result, plot_trend(result), next(iter(result["bar"])))
    return 0


if __name__ == "__main__":
    sys.exit(cli(main))
