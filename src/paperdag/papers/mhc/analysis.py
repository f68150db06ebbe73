"""From the runs' tables to the compared numbers: seed means with t confidence intervals (the shared
``paperdag.common.stats.mean_ci`` / ``paired_diff_ci``), peak mixing gains and spike counts.

    mean +- t_{0.975, k-1} s / sqrt(k)   over the k seeds (a paired difference uses the same seed's runs)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from paperdag.common.stats import mean_ci, paired_diff_ci

from .params import SpikeParams
from .records import by_seed
from .stability import spike_steps


@dataclass(frozen=True)
class Connection:
    """One connection's per-seed numbers (arrays in seed order)."""

    final_val_loss: np.ndarray
    peak_gain: np.ndarray  # max over evaluations of max(forward, backward) composite gain
    grad_spikes: np.ndarray
    loss_spikes: np.ndarray
    max_grad_norm: np.ndarray

    @property
    def spike_counts(self) -> np.ndarray:
        """Gradient-norm plus loss spikes of each seed's run."""
        return self.grad_spikes + self.loss_spikes

    @property
    def spikes(self) -> int:
        """Gradient-norm plus loss spikes, summed over seeds."""
        return int(self.spike_counts.sum())


def summarise(steps: pa.Table, evals: pa.Table, s: SpikeParams) -> Connection:
    """Per seed: last validation loss, peak composite gain, spike counts (stability.spike_steps), max grad norm."""
    val, fwd, bwd = (by_seed(evals, c) for c in ("val_loss", "gain_forward", "gain_backward"))
    grad, loss = by_seed(steps, "grad_norm"), by_seed(steps, "train_loss")
    seeds = sorted(val)
    return Connection(
        final_val_loss=np.array([val[k][-1] for k in seeds]),
        peak_gain=np.array([max(fwd[k].max(), bwd[k].max()) for k in seeds]),
        grad_spikes=np.array([len(spike_steps(grad[k], s.window, s.grad_factor)) for k in seeds]),
        loss_spikes=np.array([len(spike_steps(loss[k], s.window, s.loss_factor)) for k in seeds]),
        max_grad_norm=np.array([grad[k].max() for k in seeds]),
    )


def mean_curve_rows(evals: dict[str, pa.Table], column: str) -> list[dict[str, float]]:
    """Rows {step, <connection>: seed-mean of ``column``} for ``dvc plots``."""
    out: dict[int, dict[str, float]] = {}
    for kind, table in evals.items():
        curves = by_seed(table, column)
        steps = by_seed(table, "step")[min(curves)]
        for i, st in enumerate(steps):
            out.setdefault(int(st), {"step": int(st)})[kind] = float(np.mean([c[i] for c in curves.values()]))
    return [out[k] for k in sorted(out)]


def comparison_metrics(c: dict[str, Connection], timing: dict[str, dict[str, float]]) -> dict[str, float]:
    """Per connection: final val loss mean and 95% CI, peak gain, spikes, max grad norm, step time and forward
    GFLOPs; and mHC minus HC and minus residual (paired by seed) with their 95% CIs."""
    out: dict[str, float] = {}
    for k, s in c.items():
        loss = mean_ci(s.final_val_loss)
        out |= {f"{k}_final_val_loss_mean": loss.mean, f"{k}_final_val_loss_ci_lo": loss.lo,
                f"{k}_final_val_loss_ci_hi": loss.hi, f"{k}_peak_gain_max": float(s.peak_gain.max()),
                f"{k}_spikes": s.spikes, f"{k}_max_grad_norm": float(s.max_grad_norm.max()),
                f"{k}_train_step_ms": timing[k]["train_step_ms"], f"{k}_forward_gflops": timing[k]["forward_gflops"]}
    for other in ("hc", "residual"):
        d = paired_diff_ci(c["mhc"].final_val_loss, c[other].final_val_loss)
        out |= {f"mhc_minus_{other}_val_loss": d.mean, f"mhc_minus_{other}_ci_lo": d.lo,
                f"mhc_minus_{other}_ci_hi": d.hi}
    return out
