"""Whether a training run was unstable, read after its warm-up window (steps t > w, 1-based):

    loss surge       max_t ( m_t - min_{w < s <= t} m_s ) > surge,   m the ``smooth``-step moving average of the
                     training loss (a rise above the best value so far, the paper's late-training loss surge);
    gradient surge   max_t g_t > factor * median_t g_t   (the pre-clip gradient norm, t > w);
    divergence       the final validation loss is not finite or lies above the unigram's (the run un-learned).

A run is unstable if any of the three happened; a non-finite training loss counts as a surge.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def loss_rise(loss: np.ndarray, warmup: int, smooth: int) -> float:
    """max_t (m_t - min_{s <= t} m_s) over the moving averages m of ``loss[warmup:]`` (inf if a loss is not
    finite)."""
    v = np.asarray(loss, dtype=float)[warmup:]
    if not np.isfinite(v).all():
        return float("inf")
    m = np.convolve(v, np.ones(smooth) / smooth, mode="valid")
    return float((m - np.minimum.accumulate(m)).max())


def grad_ratio(grad_norm: np.ndarray, warmup: int) -> float:
    """max_t g_t / median_t g_t over the post-warm-up gradient norms (inf if one is not finite)."""
    g = np.asarray(grad_norm, dtype=float)[warmup:]
    if not np.isfinite(g).all():
        return float("inf")
    return float(g.max() / np.median(g))


@dataclass(frozen=True)
class RunStability:
    """One run's post-warm-up loss rise (nats/byte), peak-to-median gradient-norm ratio and final val loss, and the
    verdicts of the three tests against their thresholds."""

    loss_rise: float
    grad_ratio: float
    final_val_loss: float
    loss_surge: bool
    grad_surge: bool
    diverged: bool

    @property
    def unstable(self) -> bool:
        return self.loss_surge or self.grad_surge or self.diverged


def run_stability(loss: np.ndarray, grad_norm: np.ndarray, final_val_loss: float, unigram: float, warmup: int,
                  smooth: int, surge_nats: float, grad_factor: float) -> RunStability:
    """The three tests of the module docstring on one run's curves."""
    rise, ratio = loss_rise(loss, warmup, smooth), grad_ratio(grad_norm, warmup)
    diverged = not np.isfinite(final_val_loss) or final_val_loss > unigram
    return RunStability(rise, ratio, float(final_val_loss), rise > surge_nats, ratio > grad_factor, bool(diverged))
