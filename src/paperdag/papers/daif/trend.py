"""The CartPole competence trend on CPU: each agent's greedy score less the bar its competence precondition judges, as
the step budget doubles. It shows how far the default's 6,000 steps are from the regime and gives a lower bound on
the budget that would reach it. No stage reads it (a diagnostic: it judges no claim).

    python -m paperdag.papers.daif.trend [--jobs 2] [--out docs/trends/daif.json]

Sizes, declared in params.yaml ``daif.trend`` before the run: every agent of ``trend.agents`` on ``trend.seeds``
environment seeds of root ``trend.root`` (1000 root + i, none of them judged), one run per budget of ``trend.steps``
(the epsilon schedule scales with the budget, so a checkpoint is not a shorter run), trained and evaluated as a
train stage does (``training.train_agent`` with ``training.critic_settings``). Per seed the bar is what
``claims.learns`` asks of it (``claims.competence_bar``): the random-search rung at the same budget r
(``ladder.tuned_controller``) plus ``claims.learned_min`` of its gap to the optimum, on scores normalised by the best
state-ignoring policy and the optimum.

Reading: ``paperdag.common.trend.budget_needed`` on the shortfall, bar - score, of the mean over seeds (a score that
gains no more per doubling as the budget grows needs at least shortfall / gain more doublings).
"""

from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass

import numpy as np
import torch
from matplotlib.figure import Figure

from paperdag.common.trend import bounds, cli, parallel_runs, trend_call, trend_figure, write_trend

from .agents import agent_spec
from .claims import competence_bar
from .curves import normalise
from .envs import spec_of, trivial_return
from .ladder import tuned_controller
from .params import Params
from .plots import COLORS, LABELS
from .training import critic_settings, train_agent

TASK = "cartpole"


@dataclass(frozen=True)
class Point:
    """One (agent, budget) run: per seed its normalised greedy score, the rung's and score - bar; their means, the
    standard error of score - bar, and the run's wall seconds (one thread)."""

    agent: str
    steps: int
    score: list[float]
    rung: list[float]
    over_bar: list[float]
    score_mean: float
    rung_mean: float
    over_bar_mean: float
    over_bar_se: float
    seconds: float


def trend_seeds(p: Params) -> list[int]:
    """The trend's environment seeds, 1000 root + i."""
    return [1000 * p.trend.root + i for i in range(p.trend.seeds)]


def trend_run(p: Params, agent: str, steps: int) -> Point:
    """``agent`` trained on CartPole for ``steps`` steps on every trend seed (one CPU thread), as a train stage trains
    it, its greedy score against the bar of ``claims.learns`` at that budget."""
    torch.set_num_threads(1)
    start = time.perf_counter()
    seeds, b = trend_seeds(p), p.bayes
    spec = spec_of(TASK, TASK, 0, p.tasks.cartpole.max_episode_steps)
    hyper, lam, scale = critic_settings(p, TASK, spec.optimal_return)
    out = train_agent(spec, agent_spec(agent, b.quantiles, b.members, b.prior_scale, lam), hyper, seeds, steps,
                      p.evaluation.eval_episodes, "cpu", scale)
    seconds = time.perf_counter() - start
    trivial = trivial_return(TASK, 0, spec.max_steps, p.evaluation.random_episodes, seeds)["best"]
    controller = [tuned_controller(TASK, 0, spec.max_steps, steps, p.evaluation.eval_episodes, s) for s in seeds]
    score = normalise(out.eval_return, trivial, spec.optimal_return)
    rung = normalise(controller, trivial, spec.optimal_return)
    over = score - competence_bar(rung, p.claims.learned_min)
    return Point(agent, steps, score.tolist(), rung.tolist(), over.tolist(), float(score.mean()), float(rung.mean()),
                 float(over.mean()), float(over.std(ddof=1) / np.sqrt(len(over))), seconds)


def trend(p: Params, jobs: int) -> dict:
    """Every point of the trend and each agent's ``budget_needed`` (on the mean shortfall) with the seconds per step
    of its largest budget."""
    calls = [(p, agent, steps) for agent in p.trend.agents for steps in p.trend.steps]
    points = [asdict(pt) for pt in parallel_runs(
        trend_run, calls, jobs, lambda pt: f"{pt.agent} {pt.steps} steps: score {pt.score_mean:.3f}, score - bar "
                                           f"{pt.over_bar_mean:+.3f} +- {pt.over_bar_se:.3f}")]
    needed = bounds({a: [(pt["steps"], -pt["over_bar_mean"], pt["seconds"]) for pt in points if pt["agent"] == a]
                     for a in p.trend.agents}, 0.0)  # fmt: skip
    return {"task": TASK, "points": points, "needed": needed, "seeds": trend_seeds(p),
            "learned_min": p.claims.learned_min, "trend": p.trend.model_dump(mode="json")}


def plot_trend(result: dict) -> Figure:
    """``trend_figure`` of a ``trend`` result: each agent's mean score less its bar by budget, the bar at 0."""
    agents = result["trend"]["agents"]
    curves = {LABELS[a]: ([pt["steps"] for pt in result["points"] if pt["agent"] == a],
                          [pt["over_bar_mean"] for pt in result["points"] if pt["agent"] == a]) for a in agents}
    colors = {LABELS[a].split(" ")[0]: COLORS[a] for a in agents}
    rungs = {f"the bar: random-search rung + {result['learned_min']:g} of its gap to the optimum": 0.0}
    return trend_figure(curves, colors, rungs, "daif: CartPole competence (CPU)",
                        f"CartPole steps per seed, {len(result['seeds'])} seeds",
                        "greedy score less its competence bar (normalised)")


def main(argv: list[str] | None = None) -> int:
    call = trend_call("daif", __doc__, argv, profiles=False)
    result = trend(call.params, call.jobs)
    write_trend(call.out, result, plot_trend(result), "its bar")
    return 0


if __name__ == "__main__":
    sys.exit(cli(main))
