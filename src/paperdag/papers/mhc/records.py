"""Runs as tables: per-step and per-evaluation curves, and how they are read back by seed."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .training import RunResult


def step_table(runs: list[RunResult]) -> pa.Table:
    """Columns kind, seed, step (1-based), train_loss, grad_norm (pre-clip)."""
    rows = [dict(kind=r.kind, seed=r.seed, step=i + 1, train_loss=loss, grad_norm=g)
            for r in runs for i, (loss, g) in enumerate(zip(r.train_loss, r.grad_norm, strict=True))]
    return pa.Table.from_pylist(rows)


def eval_table(runs: list[RunResult]) -> pa.Table:
    """Columns kind, seed, step, val_loss, gain_forward, gain_backward, gain_layer_max."""
    rows = [dict(kind=r.kind, seed=r.seed, step=s, val_loss=v, gain_forward=f, gain_backward=b, gain_layer_max=m)
            for r in runs for s, v, f, b, m in zip(r.eval_step, r.val_loss, r.gain_forward, r.gain_backward,
                                                   r.gain_layer_max, strict=True)]
    return pa.Table.from_pylist(rows)


def by_seed(table: pa.Table, column: str) -> dict[int, np.ndarray]:
    """``column`` of each seed's rows, in row (step) order."""
    seeds = np.asarray(table["seed"].to_numpy())
    values = np.asarray(table[column].to_numpy(), dtype=float)
    return {int(s): values[seeds == s] for s in np.unique(seeds)}
