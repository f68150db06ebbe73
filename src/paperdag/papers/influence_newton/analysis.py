"""Errors of IF and NS against exact refits, their per-cell aggregates and scaling fits, and group effects.

Per subset T: err_NS = ||theta_T - theta_NS||, err_IF = ||theta_T - theta_IF||, gap = ||theta_NS - theta_IF||, and
the errors of the trivial rungs (trivial.py): shift = ||theta_T - theta_hat|| (no update), err_curvature and
err_diagonal.
Per random cell (n, d, k) the errors are aggregated over its subsets (mean: the primary estimate of the typical
error; median: a robustness check) and enter log-log least-squares fits (stats.loglog):
    err_NS ~ k^a_k d^a_d n^a_n                            (paper: +1, +1, -2),
    gap    ~ ((k + d) sqrt(k d))^b n^b_n                  (paper: 1, -2),
    err_IF / err_NS ~ ((k + d) / sqrt(k d))^c n^c_n       (paper: 1, 0),
with err_IF / err_NS the ratio of the two aggregates of a cell.
Group effects: Delta(theta) = L_test(theta) - L_test(theta_hat), the change of the mean test loss, at theta_IF and
theta_NS (predicted) against theta_T (actual); the least-squares slope of predicted on actual is 1 for an unbiased
method and < 1 for one that underestimates (Koh et al. 2019).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from .data import load_split
from paperdag.common.stats import Interval

from .problem import LOSS
from .stats import loglog, proportional
from .trivial import RUNGS

CELL = ["n", "d", "k", "kind"]
KEYS = [*CELL, "subset"]
PAPER_EXPONENTS = {
    ("err_ns", "k"): 1.0,
    ("err_ns", "d"): 1.0,
    ("err_ns", "n"): -2.0,
    ("gap", "kd"): 1.0,
    ("gap", "n"): -2.0,
    ("ratio", "balance"): 1.0,
    ("ratio", "n"): 0.0,
}


def _matrix(table: pa.Table, column: str, d: int) -> np.ndarray:
    """A list<float64> column of rows sharing dimension d as a (rows x d) array."""
    return table[column].combine_chunks().flatten().to_numpy(zero_copy_only=False, writable=True).reshape(-1, d)


def with_trivial(estimates: pa.Table, trivial: pa.Table) -> pa.Table:
    """The estimates table with the trivial rungs' theta_<rung> columns of the same subsets appended (both sorted by
    their keys, which must match row for row)."""
    order = [(c, "ascending") for c in KEYS]
    estimates, trivial = estimates.sort_by(order), trivial.sort_by(order)
    if not estimates.select(KEYS).equals(trivial.select(KEYS)):
        raise ValueError("the trivial estimates do not cover the same subsets as the refits")
    for name in RUNGS:
        estimates = estimates.append_column(f"theta_{name}", trivial[f"theta_{name}"])
    return estimates


def subset_errors(estimates: pa.Table, fits: dict[tuple[int, int], np.ndarray]) -> pa.Table:
    """Per subset: err_ns, err_if, gap, shift = ||theta_T - theta_hat|| and err_<rung> of every trivial rung whose
    theta_<rung> column ``estimates`` holds, next to the keys and refit grad norm."""
    parts = []
    for d in sorted(set(estimates["d"].to_pylist())):
        t = estimates.filter(pc.equal(estimates["d"], d))
        exact, t_if, t_ns = (_matrix(t, c, d) for c in ("theta_exact", "theta_if", "theta_ns"))
        hat = np.stack([fits[(n, d)] for n in t["n"].to_pylist()])
        cols = {
            "err_ns": np.linalg.norm(exact - t_ns, axis=1),
            "err_if": np.linalg.norm(exact - t_if, axis=1),
            "gap": np.linalg.norm(t_ns - t_if, axis=1),
            "shift": np.linalg.norm(exact - hat, axis=1),
        } | {f"err_{name}": np.linalg.norm(exact - _matrix(t, f"theta_{name}", d), axis=1)
             for name in RUNGS if f"theta_{name}" in t.column_names}
        parts.append(pa.table({c: t[c] for c in CELL + ["subset", "grad_norm"]} | cols))
    return pa.concat_tables(parts)


SUBSET_VALUES = ("err_ns", "err_if", "gap", "shift", *(f"err_{name}" for name in RUNGS))


def cell_subsets(errors: pa.Table, values: tuple[str, ...] = SUBSET_VALUES) -> dict[str, list]:
    """Per cell (sorted keys n, d, k, kind): the keys, and for each column of ``values`` the list of per-cell arrays
    of its per-subset values (in subset order, so two columns are paired by subset)."""
    errors = errors.sort_by([(c, "ascending") for c in CELL + ["subset"]])
    agg = errors.group_by(CELL, use_threads=False).aggregate([(c, "list") for c in values])
    agg = agg.sort_by([(c, "ascending") for c in CELL])
    out: dict[str, list] = {c: agg[c].to_pylist() for c in CELL}
    return out | {c: [np.asarray(v, float) for v in agg[f"{c}_list"].to_pylist()] for c in values}


def cell_errors(errors: pa.Table, how: str) -> dict[str, np.ndarray]:
    """Per cell (sorted keys n, d, k, kind): err_ns, err_if, gap aggregated by ``how`` (mean or median) over its
    subsets, and ratio = err_if / err_ns of the aggregates."""
    values = ("err_ns", "err_if", "gap")
    cells = cell_subsets(errors, values)
    reduce = {"mean": np.mean, "median": np.median}[how]
    out = {c: np.asarray(cells[c]) for c in CELL}
    out |= {c: np.array([reduce(v) for v in cells[c]]) for c in values}
    return out | {"ratio": out["err_if"] / out["err_ns"]}


def scaling_fits(m: dict[str, np.ndarray]) -> dict[str, dict[str, Interval]]:
    """The three log-log fits of the module docstring on the cell aggregates ``m`` (one observation per cell)."""
    n, d, k = (m[c].astype(float) for c in ("n", "d", "k"))
    return {
        "err_ns": loglog(m["err_ns"], unit="cell", k=k, d=d, n=n),
        "gap": loglog(m["gap"], unit="cell", kd=(k + d) * np.sqrt(k * d), n=n),
        "ratio": loglog(m["ratio"], unit="cell", balance=(k + d) / np.sqrt(k * d), n=n),
    }


def group_loss_changes(data: Path, estimates: pa.Table, theta_hat: np.ndarray, n: int, d: int) -> pa.Table:
    """Keys n, d, k, kind with actual = Delta(theta_T), pred_if = Delta(theta_IF), pred_ns = Delta(theta_NS), on the
    test split of the data table at ``data``."""
    t = estimates.filter(pc.and_(pc.equal(estimates["n"], n), pc.equal(estimates["d"], d)))
    X, y = (torch.as_tensor(a) for a in load_split(data, d, "test"))

    def delta(theta: np.ndarray) -> np.ndarray:
        losses = LOSS.value(torch.as_tensor(theta) @ X.T, y).mean(1)
        return (losses - LOSS.value(X @ torch.as_tensor(theta_hat), y).mean()).numpy()

    cols = {name: delta(_matrix(t, f"theta_{m}", d)) for name, m in
            [("actual", "exact"), ("pred_if", "if"), ("pred_ns", "ns")]}
    return pa.table({c: t[c] for c in CELL} | cols)


def group_slopes(group: pa.Table) -> dict[tuple[str, str], Interval]:
    """Slope of predicted on actual test-loss change by (kind, method), kind in random/coherent, method in if/ns (one
    observation per removal group)."""
    slopes = {}
    for kind in ("random", "coherent"):
        g = group.filter(pc.equal(group["kind"], kind))
        for method in ("if", "ns"):
            slopes[kind, method] = proportional(g["actual"].to_numpy(), g[f"pred_{method}"].to_numpy(), unit="group")
    return slopes
