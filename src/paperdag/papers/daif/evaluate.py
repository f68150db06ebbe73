"""Stage ``evaluate``: learning curves and AULC of every agent on every task, how each met DeepSea's reward, the
baseline ladder's scores (normalised like the agents'), the claims and the figures. Each training stage lists its seeds: every one trains on the shared seeds, except the NIG
agent's competence stage on the small DeepSea (competence.py), which extends them; the tasks whose scores the claims
pair across agents must carry exactly the shared seeds."""

from __future__ import annotations

import json

import numpy as np

from paperdag.claims import write_metrics
from paperdag.io import read_table, save_figure, write_table
from paperdag.stage import StageContext

from .baselines import BASELINES_FILE, EXPLORATION, RUNGS
from .claims import claims
from .curves import binned_curve, normalise
from .params import Params
from .plots import plot_aulc, plot_learning_curves
from .prepare import TASKS_FILE
from .reach import first_success, reach_summary, solve_episode
from .train import EPISODES_FILE, EVALUATION_FILE
from .train_nig import GRID_FILE, GRID_STAGE

PAIRED_TASKS = ("deepsea", "cartpole")  # tasks whose per-seed scores claims.py pairs across agents


def stage_seeds(shared: list[int], own: list[int], task: str, agent: str) -> list[int]:
    """A training stage's seeds ``own``, checked: the ``shared`` seeds, exactly so on a paired task, else extended."""
    if own[:len(shared)] != shared or (task in PAIRED_TASKS and own != shared):
        raise ValueError(f"train_{agent}_{task} ran seeds {own}, not the shared {shared}")
    return own


def ladder_scores(info: dict, table: dict, learned: dict[str, dict[str, np.ndarray]],
                  seeds: dict[str, dict[str, list[int]]]) -> dict[str, dict[str, np.ndarray]]:
    """Per competence task, each rung's normalised per-seed score (baselines.json ``table``), checked to cover every
    agent's seeds in order (an agent's seeds are a prefix of the rung's)."""
    out = {}
    for task, row in table.items():
        if task == EXPLORATION:
            continue
        t = info["tasks"][task]
        for agent, own in seeds[task].items():
            if row["seeds"][:len(own)] != own or len(own) != len(learned[task][agent]):
                raise ValueError(f"the ladder's seeds on {task} do not cover {agent}'s {own}")
        out[task] = {RUNGS[k]: normalise(row[k], t["trivial_return"]["best"], t["optimal_return"]) for k in RUNGS}
    return out


def exploration_ladder(info: dict, row: dict, seeds: list[int], bins: int) -> dict[str, np.ndarray]:
    """The hard DeepSea's trivial rungs as normalised per-seed AULC on the shared ``seeds``: the uniform random policy
    (a flat curve at its mean return) and explore-then-commit (its training episodes' curve, binned like an agent's)."""
    t = info["tasks"][row["task"]]
    if row["seeds"] != seeds:
        raise ValueError(f"the exploration ladder ran seeds {row['seeds']}, not the shared {seeds}")
    floor, top, n = t["trivial_return"]["best"], t["optimal_return"], t["max_steps"]
    etc = np.stack([binned_curve(n * np.arange(1, len(r) + 1), np.asarray(r), t["steps"], bins, floor)
                    for r in row["explore_then_commit"]])
    return {"uniform random policy": normalise(np.asarray(row["random"]), floor, top),
            "explore-then-commit": normalise(etc, floor, top).mean(axis=1)}


def evaluate(ctx: StageContext[Params], agents: dict[str, list[str]]) -> dict[str, float]:
    """curves.parquet, aulc.parquet, metrics.json (with the claims), learning_curves.png and aulc.png;
    ``agents[task]``: the agents trained on each task."""
    p, info = ctx.params, json.loads(ctx.input("prepare", TASKS_FILE).read_text())
    seeds, bins, bad = info["seeds"], p.evaluation.curve_bins, p.tasks.deepsea.solve_bad_fraction
    curves, aulc, learned, reach, rows, metrics, own_seeds = {}, {}, {}, {}, [], {}, {}
    table: dict[str, list] = {"task": [], "agent": [], "seed": [], "normalised_return": []}
    for task, names in agents.items():
        t = info["tasks"][task]
        floor, top = t["trivial_return"]["best"], t["optimal_return"]
        curves[task], aulc[task], learned[task], reach[task], own_seeds[task] = {}, {}, {}, {}, {}
        for agent in names:
            evaluation = json.loads(ctx.input(f"train_{agent}_{task}", EVALUATION_FILE).read_text())
            own = own_seeds[task][agent] = stage_seeds(seeds, evaluation["seeds"], task, agent)
            ep = read_table(ctx.input(f"train_{agent}_{task}", EPISODES_FILE)).to_pydict()
            seed, end, ret = (np.asarray(ep[k]) for k in ("seed", "end_step", "return"))
            raw = np.stack([binned_curve(end[seed == s], ret[seed == s], t["steps"], bins, floor) for s in own])
            c = curves[task][agent] = normalise(raw, floor, top)
            table["task"] += [task] * len(own)
            table["agent"] += [agent] * len(own)
            table["seed"] += own
            table["normalised_return"] += list(c)
            aulc[task][agent] = c.mean(axis=1)
            learned[task][agent] = normalise(evaluation["eval_return"], floor, top)
            rows += [{"task": task, "agent": agent, "seed": s, "aulc": float(a), "eval_score": float(e)}
                     for s, a, e in zip(own, aulc[task][agent], learned[task][agent], strict=True)]
            metrics[f"{task}_aulc_{agent}"] = float(aulc[task][agent].mean())
            metrics[f"{task}_eval_score_{agent}"] = float(learned[task][agent].mean())
            metrics[f"{task}_final_bin_{agent}"] = float(c[:, -1].mean())
            if t["kind"] == "deepsea":
                r = reach[task][agent] = reach_summary(
                    [first_success(end[seed == s], ret[seed == s]) for s in own],
                    [solve_episode(ret[seed == s], bad) for s in own], t["size"], t["steps"] // t["max_steps"])
                metrics[f"{task}_seeds_reaching_{agent}"] = r["seeds_reaching"]
                metrics[f"{task}_seeds_solving_{agent}"] = r["seeds_solving"]
    write_table(ctx.output("aulc.parquet"), {k: [r[k] for r in rows] for k in rows[0]})
    write_table(ctx.output("curves.parquet"), table)
    steps = {task: info["tasks"][task]["steps"] for task in agents}
    table = json.loads(ctx.input("baselines", BASELINES_FILE).read_text())
    rungs = ladder_scores(info, table, learned, own_seeds)
    explore = exploration_ladder(info, table[EXPLORATION], seeds, bins)
    metrics |= {f"{task}_ladder_{name.replace(' ', '_').replace('-', '_')}": float(v.mean())
                for task, by_rung in (*rungs.items(), ("deepsea_aulc", explore)) for name, v in by_rung.items()}
    metrics["deepsea_etc_commit_after"] = table[EXPLORATION]["commit_after"]
    nig = {task: json.loads(ctx.input(f"train_daif_nig_{task}", EVALUATION_FILE).read_text())
           for task in ("deepsea_small", "deepsea")}
    information = {"grid": json.loads(ctx.input(GRID_STAGE, GRID_FILE).read_text()),
                   **{task: {k: e[k] for k in ("variance_ratio", "variance_unvisited", "variance_visited",
                                                "pairs_unvisited")} for task, e in nig.items()}}
    for task in ("deepsea_small", "deepsea"):
        ratio = np.log(information[task]["variance_ratio"])
        metrics[f"{task}_nig_variance_ratio_geomean"] = float(np.exp(ratio.mean()))
    metrics["nig_reg"] = information["grid"]["reg"]
    write_metrics(ctx.out, metrics, claims(aulc, learned, reach, steps, rungs, explore, information, p.claims,
                                           p.nig.variance_factor, p.plans))
    save_figure(plot_learning_curves(curves, steps, p.claims.confidence), ctx.output("learning_curves.png"))
    save_figure(plot_aulc(aulc, p.claims.confidence), ctx.output("aulc.png"))
    return {k: v for k, v in metrics.items() if k.startswith("deepsea_aulc")}
