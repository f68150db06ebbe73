"""From the runs' tables to the compared numbers: per cell and seed the final loss, the peak mixing gain and the
stability tests (stability.py); over the sweep's cells the unstable runs per seed; seed means with t confidence
intervals (the shared ``paperdag.common.stats.mean_ci`` / ``paired_diff_ci``):

    mean +- t_{0.975, k-1} s / sqrt(k)   over the k seeds (a paired difference uses the same seed's runs)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from paperdag.common.stats import mean_ci, paired_diff_ci

from .params import SweepParams
from .records import by_seed
from .stability import RunStability, run_stability


@dataclass(frozen=True)
class Runs:
    """One connection's runs in one cell, per seed (arrays in seed order)."""

    final_val_loss: np.ndarray
    peak_gain: np.ndarray  # max over evaluations of max(forward, backward) composite gain (nan if the run blew up)
    stability: tuple[RunStability, ...]
    count_val_loss: np.ndarray  # val loss at ``count_step``, where the stability measures start reading the run
    count_step: int  # the first evaluation at or after the warm-up (the stability measures read steps t > warmup)

    @property
    def unstable(self) -> np.ndarray:
        """1 where the seed's run was unstable (a loss surge, a gradient surge or a divergence), else 0."""
        return np.array([int(s.unstable) for s in self.stability])


def summarise(steps: pa.Table, evals: pa.Table, warmup: int, s: SweepParams, unigram: float) -> Runs:
    """Per seed: last validation loss, peak composite gain, the stability tests after ``warmup`` steps and the
    validation loss at the first evaluation at or after ``warmup`` (where the stability measures start counting)."""
    val, at = by_seed(evals, "val_loss"), by_seed(evals, "step")
    grad, loss = by_seed(steps, "grad_norm"), by_seed(steps, "train_loss")
    seeds = sorted(val)
    count_step = count_eval_step(at[seeds[0]], warmup)
    if any(count_eval_step(at[k], warmup) != count_step for k in seeds):
        raise ValueError("the seeds of a cell were evaluated at different steps")
    return Runs(
        final_val_loss=np.array([val[k][-1] for k in seeds]),
        peak_gain=peak_gains(evals),
        stability=tuple(run_stability(loss[k], grad[k], val[k][-1], unigram, warmup, s.smooth, s.surge_nats,
                                      s.grad_factor) for k in seeds),
        count_val_loss=np.array([val[k][list(at[k]).index(count_step)] for k in seeds]),
        count_step=count_step,
    )


def count_eval_step(eval_steps: np.ndarray, warmup: int) -> int:
    """The first evaluation step at or after ``warmup``: the model the stability measures start reading (they read
    steps t > warmup); an error if no evaluation comes that late."""
    late = [int(t) for t in eval_steps if t >= warmup]
    if not late:
        raise ValueError(f"no evaluation at or after the warm-up's {warmup} steps")
    return min(late)


def sweep_unstable(cells: dict[str, Runs], sweep: tuple[str, ...]) -> np.ndarray:
    """Unstable runs per seed over the sweep's cells (0 .. len(sweep))."""
    return sum(cells[c].unstable for c in sweep)


def sweep_worst(cells: dict[str, Runs], sweep: tuple[str, ...], measure: str) -> np.ndarray:
    """Per seed, the worst (largest) post-warm-up ``measure`` over the sweep's cells: ``loss_rise`` (nats/byte) or
    ``log10_grad_ratio`` (log10 of the peak-to-median pre-clip gradient norm); inf where a run's curve was not
    finite."""
    def value(s: RunStability) -> float:
        return s.loss_rise if measure == "loss_rise" else float(np.log10(s.grad_ratio))
    if measure not in ("loss_rise", "log10_grad_ratio"):
        raise ValueError(f"unknown stability measure {measure!r}")
    return np.max([[value(s) for s in cells[c].stability] for c in sweep], axis=0)


def peak_gains(evals: pa.Table) -> np.ndarray:
    """Per seed (in seed order), the peak over evaluations of max(forward, backward) composite gain (nan if blown
    up)."""
    fwd, bwd = by_seed(evals, "gain_forward"), by_seed(evals, "gain_backward")
    return np.array([np.max(np.r_[fwd[k], bwd[k]]) for k in sorted(fwd)])


def depth_slopes(gain: dict[int, np.ndarray]) -> np.ndarray:
    """Per seed, the least-squares slope of log10 peak gain on log2 blocks over the depths of ``gain`` (blocks ->
    per-seed peak gains, the same seeds in the same order): decades of gain per doubling of depth (inf where a run
    blew up)."""
    blocks = sorted(gain)
    x = np.log2(np.array(blocks, dtype=float))
    y = np.log10(np.array([np.nan_to_num(gain[b], nan=np.inf) for b in blocks], dtype=float))  # [depths, seeds]
    if not np.isfinite(y).all():
        return np.full(y.shape[1], np.inf)
    xc = x - x.mean()
    return (xc @ (y - y.mean(axis=0))) / (xc @ xc)


def sweep_peak_gain(cells: dict[str, Runs], sweep: tuple[str, ...]) -> np.ndarray:
    """Per seed, the peak composite gain over the sweep's cells (a blown-up run, gain nan, counts as inf)."""
    return np.max([np.nan_to_num(cells[c].peak_gain, nan=np.inf) for c in sweep], axis=0)


def mean_curve_rows(evals: dict[str, pa.Table], column: str) -> list[dict[str, float]]:
    """Rows {step, <connection>: seed-mean of ``column``} for ``dvc plots``."""
    out: dict[int, dict[str, float]] = {}
    for kind, table in evals.items():
        curves = by_seed(table, column)
        steps = by_seed(table, "step")[min(curves)]
        for i, st in enumerate(steps):
            out.setdefault(int(st), {"step": int(st)})[kind] = float(np.mean([c[i] for c in curves.values()]))
    return [out[k] for k in sorted(out)]


def comparison_metrics(runs: dict[str, dict[str, Runs]]) -> dict[str, float]:
    """Per connection and cell: final val loss mean and 95% CI, peak gain, unstable runs, worst loss rise and
    gradient ratio; mHC minus HC and minus the residual in the base cell (paired by seed) with their 95% CIs."""
    out: dict[str, float] = {}
    for k, cells in runs.items():
        for cell, r in cells.items():
            loss, tag = mean_ci(r.final_val_loss), f"{k}_{cell}"
            out |= {f"{tag}_final_val_loss_mean": loss.mean, f"{tag}_final_val_loss_ci_lo": loss.lo,
                    f"{tag}_final_val_loss_ci_hi": loss.hi, f"{tag}_peak_gain_max": float(np.nanmax(r.peak_gain)),
                    f"{tag}_unstable_runs": int(r.unstable.sum()), f"{tag}_count_step": r.count_step,
                    f"{tag}_count_val_loss_mean": float(np.mean(r.count_val_loss)),
                    f"{tag}_max_loss_rise": max(s.loss_rise for s in r.stability),
                    f"{tag}_max_grad_ratio": max(s.grad_ratio for s in r.stability)}
        out[f"{k}_peak_gain_max"] = max(out[f"{k}_{c}_peak_gain_max"] for c in cells)
    for other in ("hc", "residual"):
        d = paired_diff_ci(runs["mhc"]["base"].final_val_loss, runs[other]["base"].final_val_loss)
        out |= {f"mhc_minus_{other}_val_loss": d.mean, f"mhc_minus_{other}_ci_lo": d.lo,
                f"mhc_minus_{other}_ci_hi": d.hi}
    return out
