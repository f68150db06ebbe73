"""The competence trend on CPU: each generator's GenEval on the final captions as a fraction of its own replay's,
against the bar its competence precondition judges (``claims.replay_fraction`` of the own replay, the caption-mean
image below it), as the training budget doubles. It shows how far a profile's budget is from the regime and gives a
lower bound on the budget that would reach it. No stage reads it (a diagnostic: it judges no claim).

    python -m paperdag.papers.miro.trend [--profile default|gpu] [--jobs 2] [--out docs/trends/miro.json]

Sizes, declared in params.yaml ``miro.trend`` (and its profiles' overlays) before the run: one run per method on
``trend.seed`` (neither a judged nor a pilot seed), the profile's model and budget (batch, lr, caption dropout,
EMA), trained to the largest of ``trend.steps`` and scored at every budget in it. A checkpoint is a run of that
budget: the lr is constant and nothing in ``training.train_flow`` depends on the total step count, so the EMA
weights at step s are those of an s-step run. Each is scored as a train stage scores its finals
(``rescore.final_scores``: the final captions, every reward target 1, the profile's sampler). Data, reward detector
and evaluator are the profile's ``prepare`` outputs (the store must hold them). Each method's bar is what its
competence precondition judges against (``claims.competence``): the strongest of ``replay_fraction`` x its own
replay and the caption-mean image, scored as evaluate scores them on the same captions (``trivial``: the own
replay's mean over one draw per judged seed, drawn with ``trend.seed``).

Reading: ``paperdag.common.trend.budget_needed`` on the shortfall bar - GenEval (a GenEval that gains no more per
doubling as the budget grows needs at least shortfall / gain more doublings).
"""

from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from matplotlib.figure import Figure

from paperdag.common.trend import bounds, cli, parallel_runs, trend_call, trend_figure, write_trend
from paperdag.engine import stage_keys
from paperdag.errors import UsageError
from paperdag.io import load_tensors

from .detector import Detector, geneval
from .evaluation import Sampler
from .flow import Condition, VelocityNet
from .methods import method
from .params import Params
from .pipeline import METHODS, PIPELINE
from .plots import COLOURS
from .rescore import final_scores, held_out_prompts
from .training import Budget, train_flow
from .trivial import caption_mean_images, own_replay_geneval, target_scores


DATA_FILE, DETECTOR_FILE, EVALUATOR_FILE = PIPELINE.stage("prepare").outputs[:3]  # the scenes and both detectors


@dataclass(frozen=True)
class Point:
    """One budget of a method's trend run: its GenEval (overall) on the final captions, every score of its finals
    (``evaluation.score``) and the wall seconds of the run up to that checkpoint (one thread)."""

    method: str
    steps: int
    geneval: float
    scores: dict[str, float]
    seconds: float


def trend_run(p: Params, method_name: str, prepared: Path) -> list[Point]:
    """One method trained on ``trend.seed`` to the largest budget on one CPU thread, scored at every budget (the
    train stage's network, data rows, conditioning, draws and final scoring for that one seed)."""
    torch.set_num_threads(1)
    start = time.perf_counter()
    data = load_tensors(prepared / DATA_FILE, "cpu")
    det, evaluator = Detector(), Detector()
    det.load_state_dict(load_tensors(prepared / DETECTOR_FILE, "cpu"))
    evaluator.load_state_dict(load_tensors(prepared / EVALUATOR_FILE, "cpu"))
    m = method(method_name, p.methods.single_reward, p.methods.filter_reward, p.methods.filter_fraction)
    rows = torch.as_tensor(m.rows(data["rewards"].numpy()))
    images, mask = data["images"][rows] * 2 - 1, torch.as_tensor(m.mask, dtype=torch.float32)
    cond = Condition(data["tokens"][rows], data["bins"][rows], mask.expand(len(rows), -1))
    sampler = Sampler(p.sampler.guidance, p.sampler.n_steps, p.sampler.per_prompt, p.seed)
    held_out = torch.as_tensor(held_out_prompts(p.seed, p.final.n_prompts))
    seed, b = p.trend.seed, p.budget
    torch.manual_seed(seed)
    net = VelocityNet(images[0].numel(), p.model.width, p.model.depth, mask.numel())
    points = []

    def checkpoint(step: int, emas: list[VelocityNet]) -> None:
        scores = final_scores(emas, m, held_out, det, evaluator, data["rewards"].numpy(), sampler,
                              p.rewards.min_pixels)
        one = {k: v[0] for k, v in scores.items()}
        points.append(Point(method_name, step, one["geneval_overall"], one, time.perf_counter() - start))

    budget = Budget(max(p.trend.steps), b.batch, b.lr, b.caption_dropout, b.ema)
    train_flow([net], images, cond, budget, [torch.Generator().manual_seed(seed)], set(p.trend.steps), checkpoint)
    return points


def bars(p: Params, prepared: Path) -> dict[str, dict[str, float]]:
    """Per method: its own replay's GenEval (mean of one draw per judged seed), the caption-mean image's, and the
    bar, max(replay_fraction x own replay, caption-mean)."""
    data = load_tensors(prepared / DATA_FILE, "cpu")
    evaluator = Detector()
    evaluator.load_state_dict(load_tensors(prepared / EVALUATOR_FILE, "cpu"))
    tokens, prompts = data["tokens"].numpy(), held_out_prompts(p.seed, p.final.n_prompts)
    specs = {m: method(m, p.methods.single_reward, p.methods.filter_reward, p.methods.filter_fraction)
             for m in METHODS}  # fmt: skip
    scores = {m: target_scores(spec, data["bins"].numpy(), data["rewards"].numpy()) for m, spec in specs.items()}
    rng = np.random.default_rng(p.trend.seed)
    with torch.no_grad():
        own, _ = own_replay_geneval(data["images"], tokens, scores, evaluator, prompts, p.sampler.per_prompt,
                                    len(p.methods.seeds), rng)
        caption_mean = float(geneval(evaluator, caption_mean_images(data["images"], tokens, prompts),
                                     prompts)["overall"].float().mean())
    f = p.claims.replay_fraction
    return {m: {"own_replay": float(own[m].mean()), "caption_mean": caption_mean,
                "bar": max(f * float(own[m].mean()), caption_mean)} for m in METHODS}


def trend(p: Params, profile: str, prepared: Path, jobs: int) -> dict:
    """Every point of the trend (``Point`` with its GenEval over its bar and as a fraction of its own replay) at the
    sizes of ``p`` (the params of ``profile``), each method's bar and its ``budget_needed`` (on the shortfall) with
    the seconds per step of its largest budget."""
    runs = parallel_runs(trend_run, [(p, m, prepared) for m in METHODS], jobs,
                         lambda pts: "  ".join(f"{pt.method} {pt.steps} steps GenEval {pt.geneval:.3f}" for pt in pts))
    bar = bars(p, prepared)
    points = [asdict(pt) | {"over_bar": pt.geneval - bar[pt.method]["bar"],
                            "of_own_replay": _ratio(pt.geneval, bar[pt.method]["own_replay"])}
              for pts in runs for pt in pts]  # fmt: skip
    needed = bounds({m: [(pt["steps"], -pt["over_bar"], pt["seconds"]) for pt in points if pt["method"] == m]
                     for m in METHODS}, 0.0)  # fmt: skip
    return {"points": points, "bars": bar, "replay_fraction": p.claims.replay_fraction, "profile": profile,
            "needed": needed, "seed": p.trend.seed,
            "model": p.model.model_dump(), "budget": p.budget.model_dump() | {"steps": max(p.trend.steps)}}


def _ratio(a: float, b: float) -> float | None:
    return a / b if b > 0 else None


def plot_trend(result: dict) -> Figure:
    """``trend_figure`` of a ``trend`` result: each method's GenEval less its bar by budget, the bar at 0."""
    curves = {m: ([pt["steps"] for pt in result["points"] if pt["method"] == m],
                  [pt["over_bar"] for pt in result["points"] if pt["method"] == m]) for m in METHODS}
    f = result["replay_fraction"]
    rungs = {f"the bar: max({f:g} x own replay, caption-mean image)": 0.0}
    width, lr = result["model"]["width"], result["budget"]["lr"]
    return trend_figure(curves, COLOURS, rungs, f"MIRO, {result['profile']} sizes (width {width}, lr {lr:g}): "
                        "competence (CPU)", f"training steps (x {result['budget']['batch']} images), one seed",
                        "GenEval less its competence bar")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    call = trend_call("miro", __doc__, argv)
    store, key = call.project.store(), stage_keys(call.pipeline, call.params)["prepare"][0]
    if store.lookup("miro", "prepare", key, outputs=call.pipeline.stage("prepare").outputs) is None:
        raise UsageError(f"the store holds no prepare output of miro's {call.profile} profile: run "
                         f"`paperdag run miro --profile {call.profile} --only prepare` first")  # fmt: skip
    result = trend(call.params, call.profile, store.local_path("miro", "prepare", key), call.jobs)
    write_trend(call.out, result, plot_trend(result), "its bar")
    return 0


if __name__ == "__main__":
    sys.exit(cli(main))
