"""The competence trend on CPU: each connection's final validation loss in the base cell against the bar its
competence preconditions judge (the Kneser-Ney ladder's strongest rung less ``claims.competence_margin``) as the
training budget doubles. It shows how far the default's budget is from the regime and gives a lower bound on the
budget that would reach it at the default's model size. No stage reads it (a diagnostic: it judges no claim).

    python -m paperdag.papers.mhc.trend [--jobs 2] [--out docs/trends/mhc.json]

Sizes, declared in params.yaml ``mhc.trend`` before the run: one run per connection and budget s in ``trend.steps``
on ``trend.seed`` (neither a judged, a replicate nor a pilot seed), the default's model, batch, peak lr, warm-up share
(warmup_steps / steps: ``scaled_schedule``) and schedule. Corpus: the ``gpu`` profile's (28 standard-library
packages), so that no budget here repeats a training byte. Every run is scored on the default's validation windows
of that corpus (``fixed_batches`` with the default's seed); the ladder
(``paperdag.common.baselines.byte_lm.trivial_baselines``) on the same windows, its order chosen on held-out windows
drawn with ``trend.seed``. Reading: ``paperdag.common.trend.budget_needed``.
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

from .params import Params, TrainParams
from .pipeline import CONNECTIONS
from .plots import COLORS
from .training import Batches, model_configs, train_run

CORPUS_PROFILE = "gpu"  # the corpus the gpu profile trains on: under one epoch at every budget of the trend


@dataclass(frozen=True)
class Point:
    """One run of the trend: its connection, budget, final validation loss and wall seconds (one thread)."""

    connection: str
    steps: int
    final_val_loss: float
    seconds: float


def _run(p: Params, connection: str, t: TrainParams, tokens: np.ndarray, val: Batches) -> Point:
    """One trend run on one CPU thread (the stages' setting), timed."""
    torch.set_num_threads(1)
    start = time.perf_counter()
    result = train_run(connection, *model_configs(p.model), t, p.trend.seed, tokens, val, "cpu", lambda *_: None)
    return Point(connection, t.steps, result.val_loss[-1], time.perf_counter() - start)


def trend(p: Params, corpus: dict[str, list], jobs: int) -> dict:
    """Every run of the trend (``Point``), the ladder on the scored windows, the bar (strongest rung less the
    competence margin) and, per connection, ``budget_needed`` against it with the seconds per step of its largest
    budget."""
    t = p.train
    train, val, windows, base = byte_lm_bench(corpus, t.eval_batches, t.batch_size, p.model.context, p.seed,
                                              p.trend.seed)
    calls = [(p, c, scaled_schedule(p.train, s), train, windows) for s in sorted(p.trend.steps) for c in CONNECTIONS]
    points = parallel_runs(_run, calls, jobs, lambda pt: f"{pt.connection:8s} {pt.steps:6d} steps  val "
                                                         f"{pt.final_val_loss:.4f}  {pt.seconds:.0f} s")  # fmt: skip
    strongest = base.ladder().strongest
    bar = strongest.point() - p.claims.competence_margin
    needed = bounds({c: [(pt.steps, pt.final_val_loss, pt.seconds) for pt in points if pt.connection == c]
                     for c in CONNECTIONS}, bar)  # fmt: skip
    return {"points": [asdict(pt) for pt in points], "ladder": base.metrics(),
            "strongest": {strongest.name: strongest.point()}, "margin": p.claims.competence_margin, "bar": bar,
            "needed": needed, "train_bytes": int(len(train)), "val_bytes": int(len(val)),
            "bytes_per_step": t.batch_size * p.model.context, "seed": p.trend.seed}  # fmt: skip


def plot_trend(result: dict) -> Figure:
    """``trend_figure`` of a ``trend`` result: each connection's final loss by budget, the bar and the KN 5-, 4- and
    3-gram."""
    mine = {c: [pt for pt in result["points"] if pt["connection"] == c] for c in CONNECTIONS}
    curves = {c: ([pt["steps"] for pt in pts], [pt["final_val_loss"] for pt in pts]) for c, pts in mine.items()}
    rungs = {f"bar: strongest rung - {result['margin']:g}": result["bar"]}
    rungs |= {f"KN {k}-gram": result["ladder"][f"kn{k}_val_loss"] for k in (5, 4, 3)}
    return trend_figure(curves, COLORS, rungs, "mHC: competence against the count ladder by budget (CPU)",
                        f"training steps (x {result['bytes_per_step']:,} bytes), one seed")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    call = trend_call("mhc", __doc__, argv, profiles=False)
    result = trend(call.params, profile_corpus(call, CORPUS_PROFILE), call.jobs)
    write_trend(call.out, result, plot_trend(result), f"the bar {result['bar']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(cli(main))
