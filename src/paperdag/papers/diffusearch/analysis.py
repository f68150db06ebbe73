"""From per-task decoder rows to the quantities the claims compare (per seed, then t-intervals over seeds).

    acc_d(seed)           = mean_tasks solved(d, task, seed)
    gain vs confidence    = acc_MCTS - acc_PI-confidence   (the plan-and-infill baseline; paired over seeds)
    gain vs best fixed    = acc_MCTS - max_{o in l2r, confidence, random} acc_PI-o  (the best order by mean accuracy)
    effect of c           = mean_n [acc(c_max, n) - acc(c_min, n)]
    effect of simulations = mean_c [acc(c, n_max) - acc(c, n_min)]
    c over simulations    = effect of c - effect of simulations                             (paired over seeds)
    sequential share      = per seed, the mean over tasks of the fraction of free commits (the last is forced)
                            taking the leftmost open slot (experiment.sequential_fraction)
    cost_d                = sum forward passes / sum solved tasks (pooled over seeds)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperdag.common.stats import Interval, mean_ci, paired_diff_ci

from .experiment import POLICIES, mcts_name

UNIT = "seed"  # the unit of every interval: one trained (MDM, AR) pair
BASELINES = ("ar", "mdm_confidence", *(f"pi_{p}" for p in POLICIES))


@dataclass(frozen=True)
class Summary:
    """Everything claims.py and plots.py need."""

    accuracy: dict[str, Interval]  # decoder -> accuracy over seeds
    grid: dict[str, Interval]  # mcts label -> accuracy over seeds
    per_seed: dict[str, np.ndarray]  # decoder or mcts label -> accuracy per seed (ascending seed)
    best_fixed: str  # the fixed-order decoder with the highest mean accuracy
    gain_vs_best_fixed: Interval
    gain_vs_confidence: Interval
    gain_vs_l2r: Interval
    gain_vs_ar: Interval
    effect_c: Interval
    effect_sims: Interval
    c_over_sims: Interval  # paired over seeds: effect of c - effect of simulations
    sequential_share: Interval  # DiffuSearch (main grid point), over seeds
    random_sequential_share: Interval  # plan-and-infill in a random order: the trivial reference, over seeds
    deviated_share: float
    deviated_mcts: Interval
    deviated_l2r: Interval
    deviated_gain: Interval  # paired over seeds: MCTS - l2r on the deviated tasks
    cost: dict[str, float]
    trace_exact: dict[str, float]
    strata: dict[str, dict[str, np.ndarray]]  # stratum (in_order, out_of_order) -> decoder -> accuracy per seed


def _by_seed(t: dict[str, np.ndarray], decoder: str, mask: np.ndarray | None = None) -> np.ndarray:
    """acc_d per seed (ascending seed), over the tasks selected by ``mask`` (NaN where none is)."""
    rows = t["decoder"] == decoder
    if mask is not None:
        rows &= mask
    return np.array([t["solved"][rows & (t["seed"] == s)].mean() if (rows & (t["seed"] == s)).any() else np.nan
                     for s in np.unique(t["seed"])])


def summarise(table: dict[str, list], c_puct: float, n_sim: int, c_grid: list[float], sim_grid: list[int],
              confidence: float) -> Summary:
    """The module docstring's quantities; MCTS is the main grid point (c_puct, n_sim). Every interval is over
    training seeds (unit ``seed``: one trained (MDM, AR) pair, its per-task rows averaged first)."""
    t = {k: np.array(v, dtype=object if k == "order" else None) for k, v in table.items()}
    main = mcts_name(c_puct, n_sim)
    acc = {d: _by_seed(t, d) for d in (*BASELINES, main)}
    grid = {mcts_name(c, n): _by_seed(t, mcts_name(c, n)) for c in c_grid for n in sim_grid}
    share = {d: np.array([t["sequential"][(t["decoder"] == d) & (t["seed"] == s)].mean()
                          for s in np.unique(t["seed"])]) for d in (main, "pi_random")}
    best = max((f"pi_{p}" for p in POLICIES), key=lambda d: acc[d].mean())
    eff_c = np.mean([grid[mcts_name(c_grid[-1], n)] - grid[mcts_name(c_grid[0], n)] for n in sim_grid], axis=0)
    eff_n = np.mean([grid[mcts_name(c, sim_grid[-1])] - grid[mcts_name(c, sim_grid[0])] for c in c_grid], axis=0)
    is_main = t["decoder"] == main
    deviated = np.zeros(len(t["task"]), dtype=bool)
    for seed, task in zip(t["seed"][is_main & (t["sequential"] < 1)], t["task"][is_main & (t["sequential"] < 1)],
                          strict=True):
        deviated |= (t["seed"] == seed) & (t["task"] == task)
    dev_mcts, dev_l2r = _by_seed(t, main, deviated), _by_seed(t, "pi_l2r", deviated)
    ok = ~np.isnan(dev_mcts)

    def ci(v: np.ndarray | list[float]) -> Interval:
        return mean_ci(v, confidence, unit=UNIT)

    def paired(a: np.ndarray, b: np.ndarray) -> Interval:
        return paired_diff_ci(a, b, confidence, unit=UNIT)

    solved = {d: t["solved"][t["decoder"] == d].sum() for d in (*BASELINES, main)}
    return Summary(
        accuracy={d: ci(v) for d, v in acc.items()},
        grid={d: ci(v) for d, v in grid.items()},
        per_seed=acc | grid,
        best_fixed=best,
        gain_vs_best_fixed=paired(acc[main], acc[best]),
        gain_vs_confidence=paired(acc[main], acc["pi_confidence"]),
        gain_vs_l2r=paired(acc[main], acc["pi_l2r"]),
        gain_vs_ar=paired(acc[main], acc["ar"]),
        effect_c=ci(eff_c), effect_sims=ci(eff_n),
        c_over_sims=paired(eff_c, eff_n),
        sequential_share=ci(share[main]),
        random_sequential_share=ci(share["pi_random"]),
        deviated_share=float((t["sequential"][is_main] < 1).mean()),
        deviated_mcts=ci(dev_mcts[ok] if ok.any() else [0.0]),
        deviated_l2r=ci(dev_l2r[ok] if ok.any() else [0.0]),
        deviated_gain=paired(dev_mcts[ok] if ok.any() else [0.0], dev_l2r[ok] if ok.any() else [0.0]),
        cost={d: float(t["forwards"][t["decoder"] == d].sum() / max(solved[d], 1)) for d in solved},
        trace_exact={d: float(t["trace_exact"][t["decoder"] == d].mean()) for d in solved},
        strata={name: {d: _by_seed(t, d, t["task_sequential"] == flag) for d in (*BASELINES, *grid)}
                for name, flag in STRATA.items()},
    )


@dataclass(frozen=True)
class StudySummary:
    """The order study (study.py, stage ``orders``) per seed: accuracies of the slot orders by stratum, the best
    fixed order, and the per-seed intervals over held-out programs of the competence and mechanism measures."""

    seeds: list[int]
    acc: dict[str, dict[str, np.ndarray]]  # stratum (all, in_order, out_of_order) -> order -> accuracy per seed
    best_order: list[tuple[int, ...]]  # per seed: the fixed order with the highest accuracy on all programs
    forward: list[Interval]  # per seed: the MDM's forward one-hop over programs
    forward_vs_count: list[Interval]  # per seed: forward one-hop - count table (value slots), paired over programs
    ar_value: list[Interval]  # per seed: the AR's value-slot one-hop (true prefix; answer slot excluded)
    ar_vs_count: list[Interval]
    gain: list[Interval]  # per seed: filled-minus-masked gain over out-of-order programs (unit: program)
    gain_right: list[Interval]  # the same over slots reading a variable listed to their right
    gain_in_order: list[Interval]  # the same over in-order programs (reported)
    count_value: float
    count_answer: float
    majority_value: float
    majority_answer: float
    programs: int
    out_of_order: int


STUDY_ORDERS = ("dependency", "best_fixed", "any_order", "l2r", "confidence", "random")
STRATA = {"in_order": True, "out_of_order": False}


def study_summary(table: dict[str, list], orders: list[tuple[int, ...]], confidence: float) -> StudySummary:
    """Per seed (ascending): order accuracies by stratum (the best fixed order chosen on all programs), and t
    intervals over programs (unit ``program``) of the forward one-hop, its paired gap over the count table, the AR's
    value-slot one-hop and the filled-minus-masked gains (programs without an eligible slot left out)."""
    t = {k: np.array(v) for k, v in table.items()}
    seeds = sorted(int(s) for s in np.unique(t["seed"]))
    strata = {"all": np.ones(len(t["seed"]) // len(seeds), dtype=bool)}
    acc: dict[str, dict[str, list[float]]] = {s: {o: [] for o in STUDY_ORDERS} for s in ("all", *STRATA)}
    best, fwd, fwd_gap, ar, ar_gap, gain, right, inside = [], [], [], [], [], [], [], []

    def ci(v: np.ndarray) -> Interval:
        v = v[~np.isnan(v)]
        return mean_ci(v, confidence, unit="program") if len(v) >= 2 else Interval(float("nan"), float("nan"),
                                                                                    float("nan"), len(v))

    for seed in seeds:
        rows = t["seed"] == seed
        every = np.stack(t["every_order"][rows]).astype(bool)
        in_order = t["in_order"][rows].astype(bool)
        strata |= {"in_order": in_order, "out_of_order": ~in_order}
        b = int(every.mean(0).argmax())
        best.append(orders[b])
        for name, mask in strata.items():
            for o in STUDY_ORDERS:
                col = every[:, b] if o == "best_fixed" else t[o][rows].astype(bool)
                acc[name][o].append(float(col[mask].mean()) if mask.any() else float("nan"))
        count = t["count_value"][rows].astype(float)
        fwd.append(ci(t["forward"][rows].astype(float)))
        fwd_gap.append(paired_diff_ci(t["forward"][rows].astype(float), count, confidence, unit="program"))
        ar.append(ci(t["ar_value"][rows].astype(float)))
        ar_gap.append(paired_diff_ci(t["ar_value"][rows].astype(float), count, confidence, unit="program"))
        g, gr = t["gain"][rows].astype(float), t["gain_right"][rows].astype(float)
        gain.append(ci(g[~in_order]))
        right.append(ci(gr[~in_order]))
        inside.append(ci(g[in_order]))
    first = t["seed"] == seeds[0]
    return StudySummary(
        seeds=seeds, acc={s: {o: np.array(v) for o, v in d.items()} for s, d in acc.items()}, best_order=best,
        forward=fwd, forward_vs_count=fwd_gap, ar_value=ar, ar_vs_count=ar_gap, gain=gain, gain_right=right,
        gain_in_order=inside,
        count_value=float(t["count_value"][first].mean()), count_answer=float(t["count_answer"][first].mean()),
        majority_value=float(t["majority_value"][first].mean()),
        majority_answer=float(t["majority_answer"][first].mean()),
        programs=int(first.sum()), out_of_order=int((~t["in_order"][first].astype(bool)).sum()))
