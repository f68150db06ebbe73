"""The pilot of the sample-size plans: the calibration seeds' cells, decoded like the evaluation's in the retrieve
stage (pilot.parquet), give the spread over seeds of one seed's value of each seed-level claim statistic; that spread
sizes the claim's plan (paperdag.common.plans: Guenther's n >= ((z_{0.975} + z_{power}) s / d)^2 + z_{0.975}^2 / 2
at the declared effect d). The calibration seeds also set beta and rho, so their D = 2 accuracies sit near the
calibration target by construction; only their spread is used. No pilot seed enters a judged interval.

Families (the plan each sizes): ``slopes``, one seed's OLS slope over D of log rho_50(HAMN) - log rho_50(baseline);
``deepest``, one seed's accuracy advantage of HAMN at the largest D; ``transfer``, one seed's D = 2 accuracy of the
ML decoder of a compared memory's noise (the accuracy its rho is calibrated to). A family's spread is the largest
sample sd (ddof 1) over its parts (every b, every baseline or memory): the plan must serve its least precise part.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .analysis import advantage, depth_slopes, tolerance_table

FAMILIES = ("slopes", "deepest", "transfer")


@dataclass(frozen=True)
class Spread:
    """One family's pilot spread: the largest sd over its parts, the part that gave it, the pilot's units (seeds),
    and every part's sd."""

    sd: float
    part: str
    n: int
    by_part: dict[str, float]


def _spread(parts: dict[str, np.ndarray]) -> Spread:
    sds = {k: float(np.std(v, ddof=1)) for k, v in parts.items()}
    worst = max(sds, key=sds.__getitem__)
    return Spread(sds[worst], worst, min(len(v) for v in parts.values()), sds)


def seed_spreads(cells: pd.DataFrame, baselines: tuple[str, ...], compared: tuple[str, ...], branchings: list[int],
                 deepest: int, shallow: int) -> dict[str, Spread]:
    """family -> its spread over the seeds of ``cells`` (a cell table of the pilot, analysis.cell_table)."""
    slopes, adv, acc = {}, {}, {}
    for b in branchings:
        for m in baselines:
            slopes[f"{m}_b{b}"] = depth_slopes(tolerance_table(cells, m), b)
            a = advantage(cells, m)
            adv[f"{m}_b{b}"] = a[(a.branching == b) & (a.depth == deepest)]["delta"].to_numpy()
        for m in compared:
            acc[f"{m}_b{b}"] = cells[(cells.model == m) & (cells.branching == b)
                                     & (cells.depth == shallow)]["accuracy_ml"].to_numpy()
    return {"slopes": _spread(slopes), "deepest": _spread(adv), "transfer": _spread(acc)}
