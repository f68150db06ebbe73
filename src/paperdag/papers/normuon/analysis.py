"""Pure functions over training curves: steps to a target loss, step reductions, seed statistics, and the
comparison of every optimizer against AdamW.

Per seed s, the target is AdamW's (tuned lr) final validation loss on seed s; each optimizer's steps to reach it
come from ``steps_to_target``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

REFERENCE = "adamw"
Curves = dict[int, dict[str, list]]  # seed -> {"step", "val_loss", "row_cv"} of one optimizer's selected run


def steps_to_target(steps: list[int], losses: list[float], target: float) -> float:
    """First step at which the validation loss reaches ``target`` (<=), linearly interpolated between the two
    evaluations that bracket the crossing: s = s_{i-1} + (l_{i-1} - target) / (l_{i-1} - l_i) (s_i - s_{i-1}).
    ``inf`` when the curve never reaches the target.
    """
    for i, loss in enumerate(losses):
        if loss <= target:
            if i == 0:
                return float(steps[0])
            frac = (losses[i - 1] - target) / (losses[i - 1] - loss)
            return float(steps[i - 1] + frac * (steps[i] - steps[i - 1]))
    return math.inf


def step_reduction(steps_opt: float, steps_ref: float) -> float:
    """Fraction of the reference's steps saved: 1 - steps_opt / steps_ref (-inf when the optimizer never arrives)."""
    return 1.0 - steps_opt / steps_ref


def seed_stats(values: list[float]) -> dict[str, float | None]:
    """Mean, sample standard deviation (ddof = 1), min and max over seeds; ``None`` for non-finite entries."""
    arr = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(arr)):
        return {"mean": None, "std": None, "min": None, "max": None}
    return {"mean": float(arr.mean()), "std": float(arr.std(ddof=1)) if arr.size > 1 else 0.0,
            "min": float(arr.min()), "max": float(arr.max())}  # fmt: skip


def finite_or_none(values: list[float]) -> list[float | None]:
    """JSON-safe copy: non-finite numbers (a target never reached) become ``None``."""
    return [float(v) if math.isfinite(v) else None for v in values]


@dataclass(frozen=True)
class Comparison:
    """Per-seed numbers (in ``seeds`` order) of every optimizer against the reference (AdamW) on the same seed."""

    seeds: list[int]
    final: dict[str, list[float]]  # final validation loss
    to_target: dict[str, list[float]]  # steps to AdamW's final validation loss (inf: never reached)
    reduction: dict[str, list[float]]  # step_reduction against AdamW, every optimizer but AdamW
    row_cv: dict[str, list[float]]  # mean over evaluations of the update row-norm CV

    @property
    def gain_pp(self) -> list[float]:
        """NorMuon's step reduction minus Muon's, in percentage points: 100 (r_normuon - r_muon)."""
        return [100 * (a - b) for a, b in zip(self.reduction["normuon"], self.reduction["muon"], strict=True)]


def compare(curves: dict[str, Curves]) -> Comparison:
    """Final losses, steps to AdamW's final loss, step reductions and mean row CVs of every optimizer, per seed."""
    seeds = sorted(curves[REFERENCE])
    if any(sorted(c) != seeds for c in curves.values()):
        raise ValueError(f"optimizers were trained on different seeds: { {n: sorted(c) for n, c in curves.items()} }")
    final = {n: [c[s]["val_loss"][-1] for s in seeds] for n, c in curves.items()}
    to_target = {n: [steps_to_target(c[s]["step"], c[s]["val_loss"], t) for s, t in zip(seeds, final[REFERENCE])]
                 for n, c in curves.items()}  # fmt: skip
    reduction = {n: [step_reduction(a, b) for a, b in zip(to_target[n], to_target[REFERENCE])]
                 for n in curves if n != REFERENCE}  # fmt: skip
    row_cv = {n: [float(np.nanmean(c[s]["row_cv"])) for s in seeds] for n, c in curves.items()}
    return Comparison(seeds, final, to_target, reduction, row_cv)


def stats_metrics(name: str, values: list[float]) -> dict[str, float]:
    """``<name>_mean``, ``_std``, ``_min``, ``_max`` of ``seed_stats`` (nothing when a value is not finite)."""
    return {f"{name}_{k}": v for k, v in seed_stats(values).items() if v is not None}


def comparison_metrics(c: Comparison) -> dict[str, float]:
    """Scalar metrics of a comparison: seed statistics, per-seed steps to AdamW's final loss (when reached) and
    how many seeds reached it."""
    metrics: dict[str, float] = {"first_seed": c.seeds[0], "n_seeds": len(c.seeds)}
    for n in c.final:
        metrics |= stats_metrics(f"{n}_final_val_loss", c.final[n]) | stats_metrics(f"{n}_update_row_cv", c.row_cv[n])
        metrics |= {f"{n}_steps_to_adamw_final_seed{s}": v for s, v in zip(c.seeds, c.to_target[n]) if math.isfinite(v)}
        metrics[f"{n}_seeds_reaching_adamw_final"] = sum(math.isfinite(v) for v in c.to_target[n])
    for n, r in c.reduction.items():
        metrics |= stats_metrics(f"{n}_step_reduction_vs_adamw_pct", [100 * x for x in r])
    return metrics | stats_metrics("normuon_minus_muon_gain_pp", c.gain_pp)
