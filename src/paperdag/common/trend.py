"""A competence trend: a model's loss against a bar (the strongest trivial baseline, less any margin) as the training
budget doubles, and the least budget that could close the gap.

Reading (``budget_needed``): gap(s) = L(s) - bar at the largest budget s. With d the loss drop per doubling over the
last two budgets, a loss whose drop per doubling does not grow with s (a power law a + b s^-c, or any slower decay)
needs at least gap / d more doublings to reach the bar: s* >= s_max 2^(gap / d), a lower bound on the steps (and, at
the measured seconds per step, on the CPU time) that would reach it at that model size.

Runs are independent processes (``parallel_runs``, one CPU thread each, spawned: no inherited thread pools), so a
trend's numbers do not depend on how many run side by side; their wall seconds do.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from matplotlib.figure import Figure
from pydantic import BaseModel

from paperdag.common.baselines.byte_lm import Baselines, trivial_baselines
from paperdag.common.corpus import DOC_SEPARATOR, collect_stdlib_corpus, fixed_batches
from paperdag.common.tokenizer import encode
from paperdag.dag import Pipeline, get_pipeline
from paperdag.engine import load_pipeline_params
from paperdag.errors import PaperdagError
from paperdag.io import new_figure, save_figure, write_json_atomic
from paperdag.project import Project

Schedule = TypeVar("Schedule", bound=BaseModel)


def budget_needed(steps: Sequence[int], losses: Sequence[float], bar: float) -> dict[str, float]:
    """The module docstring's bound from the last two budgets (ascending): gap, drop per doubling d, the doublings
    gap / d still needed (0 when the bar is passed, inf when the loss did not fall) and the steps s_max 2^(gap / d).
    With one budget, the gap alone."""
    gap = losses[-1] - bar
    if len(steps) == 1:
        return {"gap": gap}
    drop = (losses[-2] - losses[-1]) / math.log2(steps[-1] / steps[-2])
    doublings = 0.0 if gap <= 0 else math.inf if drop <= 0 else gap / drop
    return {"gap": gap, "drop_per_doubling": drop, "doublings_at_least": doublings,
            "steps_at_least": steps[-1] * 2.0**doublings if math.isfinite(doublings) else math.inf}  # fmt: skip


def bounds(runs: dict[str, Sequence[tuple[int, float, float]]], bar: float) -> dict[str, dict[str, float]]:
    """Per model, ``budget_needed`` of its runs (steps, final loss, wall seconds; ascending budgets) against ``bar``,
    with the seconds per step of its largest budget and, where the bound is finite or inf, the CPU seconds it means."""
    out = {}
    for name, points in runs.items():
        steps, losses, seconds = zip(*points, strict=True)
        n = budget_needed(steps, losses, bar) | {"seconds_per_step": seconds[-1] / steps[-1]}
        if "steps_at_least" in n:
            n["cpu_seconds_at_least"] = n["steps_at_least"] * n["seconds_per_step"]
        out[name] = n
    return out


def scaled_schedule(train: Schedule, steps: int) -> Schedule:
    """A paper's training schedule (its ``steps``, ``warmup_steps``, ``eval_every``) scaled to ``steps``: warm-up at
    the same share of the budget (at least one step), evaluations at the end (and wherever the paper's loop always
    evaluates)."""
    warmup = max(1, round(steps * train.warmup_steps / train.steps))
    return train.model_copy(update={"steps": steps, "warmup_steps": warmup, "eval_every": steps})


def corpus_streams(columns: dict[str, list]) -> tuple[np.ndarray, np.ndarray]:
    """The training and validation byte streams of ``collect_stdlib_corpus``'s columns, each split's documents joined
    as ``load_split_tokens`` joins them."""
    return tuple(encode(DOC_SEPARATOR.join(t for t, k in zip(columns["text"], columns["split"], strict=True)
                                           if k == split)) for split in ("train", "val"))  # type: ignore[return-value]


def byte_lm_bench(corpus: dict[str, list], batches: int, batch_size: int, context: int, seed: int,
                  heldout_seed: int) -> tuple[np.ndarray, np.ndarray, list, Baselines]:
    """A byte-level language model's trend bench on ``corpus`` (``collect_stdlib_corpus``'s columns): the training
    and validation streams (``corpus_streams``), the scored windows (``fixed_batches`` of the validation stream with
    ``seed``) and the ladder on those windows (``trivial_baselines``, its order chosen on windows of
    ``heldout_seed``)."""
    train, val = corpus_streams(corpus)
    windows = fixed_batches(val, batches, batch_size, context, seed=seed)
    return train, val, windows, trivial_baselines(train, val, batches, batch_size, context, seed,
                                                  heldout_seed=heldout_seed)


def profile_corpus(call: TrendCall, profile: str) -> dict[str, list]:
    """The standard-library corpus that ``profile`` of the trend's paper trains on (its ``corpus`` params)."""
    c = load_pipeline_params(call.project, call.pipeline, profile).corpus
    return collect_stdlib_corpus(list(c.packages), c.max_bytes, c.val_fraction)


def _apply(call: tuple[Callable[..., Any], tuple]) -> Any:
    fn, args = call
    return fn(*args)


def _leave_sigint_to_the_parent() -> None:
    """A worker ignores Ctrl-C: the parent catches it and terminates the pool (one message, no worker tracebacks)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def parallel_runs(fn: Callable[..., Any], calls: Sequence[tuple], jobs: int,
                  describe: Callable[[Any], str]) -> list[Any]:  # fmt: skip
    """``fn(*args)`` for every ``args`` in ``calls``, ``jobs`` at a time in spawned processes, results in call order;
    a line ``describe(result)`` on stderr as each one is collected (progress on long trends). On an error or Ctrl-C
    the pool is terminated: no run goes on after this returns or raises."""
    with multiprocessing.get_context("spawn").Pool(jobs, _leave_sigint_to_the_parent) as pool:  # exit: terminate
        results = []
        for result in pool.imap(_apply, [(fn, args) for args in calls]):
            results.append(result)
            print(describe(result), file=sys.stderr, flush=True)
    return results


def trend_figure(curves: dict[str, tuple[list[int], list[float]]], colors: dict[str, str], rungs: dict[str, float],
                 title: str, xlabel: str, ylabel: str = "validation loss (nats/byte)") -> Figure:  # fmt: skip
    """Final loss (or ``ylabel``'s score) against the budget (log2 steps), one line per model (``curves``: label ->
    (steps, values)), the ladder's ``rungs`` (label -> value; the first, the bar, a solid line) as horizontal
    lines."""
    fig, ax = new_figure(6.5, 4.2)
    for label, (steps, losses) in curves.items():
        ax.plot(steps, losses, "o-", color=colors[label.split(" ")[0]], label=label)
    for (label, value), style in zip(rungs.items(), ("-", ":", "-.", "--"), strict=False):
        ax.axhline(value, color="k", ls=style, lw=1, label=label)
    ax.set_xscale("log", base=2)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def write_trend(out: Path, result: dict[str, Any], figure: Figure, bar: str) -> None:
    """``result`` as JSON at ``out`` and ``figure`` as PNG beside it, each written atomically; then one line per model
    of ``result["needed"]`` (its ``budget_needed`` against the bar named ``bar``) on stdout."""
    write_json_atomic(out, result)
    png = out.with_suffix(".png")
    tmp = png.with_name(f".{png.name}.tmp")
    save_figure(figure, tmp)
    os.replace(tmp, png)
    for name, n in result["needed"].items():
        line = f"{name}: gap {n['gap']:+.3f} to {bar}"
        if "steps_at_least" in n:
            line += (f", drop {n['drop_per_doubling']:.3f} per doubling -> at least {n['steps_at_least']:.3g} steps, "
                     f"{n['cpu_seconds_at_least'] / 60:.3g} CPU-min")
        print(line)


@dataclass(frozen=True)
class TrendCall:
    """What a trend's command line asks for: the project, the paper's pipeline, the profile and its params, the
    runs side by side and where the result goes."""

    project: Project
    pipeline: Pipeline
    profile: str
    params: Any
    jobs: int
    out: Path


def trend_call(slug: str, doc: str, argv: list[str] | None, profiles: bool = True) -> TrendCall:
    """Parse a trend's arguments (``--profile`` where ``profiles``, ``--jobs``, ``--out``; the description is the
    first paragraph of ``doc``): the result goes to ``docs/trends/<slug>[-<profile>].json`` of the project unless
    ``--out`` names a file."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    if profiles:
        parser.add_argument("--profile", default="default", help="whose model, budget and trend sizes")
    parser.add_argument("--jobs", type=int, default=2, help="runs side by side, one CPU thread each")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"the result (JSON; default docs/trends/{slug}{'[-<profile>]' if profiles else ''}.json "
                        "in the project), the figure beside it as .png")  # fmt: skip
    args = parser.parse_args(argv)
    project, pipeline = Project.find(), get_pipeline(slug)
    profile = getattr(args, "profile", "default")
    suffix = "" if profile == "default" else f"-{profile}"
    return TrendCall(project, pipeline, profile, load_pipeline_params(project, pipeline, profile), args.jobs,
                     args.out or project.root / "docs" / "trends" / f"{slug}{suffix}.json")


def cli(main: Callable[[], int]) -> int:
    """Run a trend's ``main``: a ``PaperdagError`` becomes one ``error:`` line and its exit code, Ctrl-C exit code
    130 (the results are written only at the end, atomically: nothing half-written remains)."""
    try:
        return main()
    except PaperdagError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("interrupted: nothing written", file=sys.stderr)
        return 130
