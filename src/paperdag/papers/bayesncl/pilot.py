"""The seed plan's pilot: pretraining seeds that no judged run reuses (params ``plans.pilot``: seed indices
[first_seed, first_seed + n_seeds), trained by the ``pilot`` profile with the default's data and recipe) give the spread
over seeds of each part a claim judges, and that spread sizes the ``seeds`` plan.

A part is one per-seed value an interval of the claims is taken over (claims.py), per dataset d:
``consistency_<d>``, BayesNCL - NCL semantic consistency (consistency_order); ``background_<b>_<d>``, BayesNCL - b
background share, b in (SimCLR, NCL) (background_share_lowest); ``probe_<b>_<d>``, BayesNCL - b probe accuracy
(probe_parity); ``kept_<d>``, BayesNCL's kept share (the precondition gate_acts). Its spread s is the sample sd
(ddof 1) of those values over the pilot's seeds; its effect d is the claim's declared margin where it has one
(parity: probe_tol_pp / 100; gate_acts: 1 - gate_kept_max, a gate keeping twice the bar's minimum drop) and the
declared smallest effect on a share (``share_effect``) for the superiority claims without one; its n is the
platform's power rule (paperdag.common.plans.required_n, Guenther's n >= ((z_{0.975} + z_{power}) s / d)^2 +
z_{0.975}^2 / 2). One seed serves every part (the methods are paired by seed), so the plan's n is the largest part's
n, and the plan records that (binding) part's spread and effect.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperdag.common.plans import required_n

PAPER, BASELINES = "bayesncl", ("simclr", "ncl")  # the paper's method and its baselines (claims.py reads them here)
Runs = dict[tuple[str, str, str], np.ndarray]  # (dataset, method, metric) -> one value per seed, in seed order


def part_names(datasets: list[str]) -> list[str]:
    """The parts, in the order part_values gives them."""
    return [name for d in datasets for name in (f"consistency_{d}", *(f"background_{b}_{d}" for b in BASELINES),
                                                 *(f"probe_{b}_{d}" for b in BASELINES), f"kept_{d}")]


def part_values(runs: Runs, datasets: list[str]) -> dict[str, np.ndarray]:
    """part -> its per-seed values (module docstring): the paired differences the claims' intervals are taken over,
    and BayesNCL's kept share."""
    out = {}
    for d in datasets:
        out[f"consistency_{d}"] = runs[d, PAPER, "consistency"] - runs[d, "ncl", "consistency"]
        for b in BASELINES:
            out[f"background_{b}_{d}"] = runs[d, PAPER, "background_share"] - runs[d, b, "background_share"]
        for b in BASELINES:
            out[f"probe_{b}_{d}"] = runs[d, PAPER, "probe_acc"] - runs[d, b, "probe_acc"]
        out[f"kept_{d}"] = np.asarray(runs[d, PAPER, "kept"], dtype=float)
    return out


def spreads(runs: Runs, datasets: list[str]) -> dict[str, float]:
    """part -> sample sd (ddof 1) of its per-seed values."""
    return {k: float(np.std(v, ddof=1)) for k, v in part_values(runs, datasets).items()}


def effects(parts: list[str], share_effect: float, probe_tol_pp: float, gate_kept_max: float) -> dict[str, float]:
    """part -> its effect of interest: probe_tol_pp / 100 for parity, 1 - gate_kept_max for the kept share,
    ``share_effect`` for the consistency and background-share differences."""
    def effect(part: str) -> float:
        if part.startswith("probe_"):
            return probe_tol_pp / 100
        if part.startswith("kept_"):
            return 1.0 - gate_kept_max
        return share_effect
    return {k: effect(k) for k in parts}


@dataclass(frozen=True)
class SeedPlan:
    """The plan from a pilot: every part's spread, effect and n; the binding (largest-n) part."""

    sds: dict[str, float]
    effects: dict[str, float]
    n: dict[str, int]
    part: str

    @property
    def planned(self) -> int:
        return self.n[self.part]

    @property
    def sd(self) -> float:
        return self.sds[self.part]

    @property
    def effect(self) -> float:
        return self.effects[self.part]


def seed_plan(sd: dict[str, float], effect: dict[str, float], power: float) -> SeedPlan:
    """n_part = required_n(effect_part, sd_part, power) for every part; the plan's n is the largest (ties: the first
    part in order). A part with no spread (sd 0: every pilot seed alike; or not finite) is given the rule's minimum,
    2, and the plan's check flags it."""
    n = {k: required_n(effect[k], s, power) if np.isfinite(s) and s > 0 else 2 for k, s in sd.items()}
    part = max(n, key=n.__getitem__)
    return SeedPlan(dict(sd), {k: effect[k] for k in sd}, n, part)
