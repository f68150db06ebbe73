"""One (n, d) problem of the grid as torch tensors: data, full fit theta_hat, Hessian H, and its removal cells."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import torch
from torch import Tensor

from .data import load_split, subset_indices
from .glm import Logistic, hessian

LOSS = Logistic()


@dataclass(frozen=True)
class Problem:
    """Training data (X: n x d, y: n) with theta_hat = argmin L and H = hess L(theta_hat) (ridge included)."""

    n: int
    d: int
    X: Tensor
    y: Tensor
    theta_hat: Tensor
    H: Tensor


def read_fits(path: Path) -> dict[tuple[int, int], np.ndarray]:
    """theta_hat by (n, d) from the train stage's fits table at ``path``."""
    t = pq.read_table(path).to_pylist()
    return {(r["n"], r["d"]): np.asarray(r["theta_hat"]) for r in t}


def load_problem(data: Path, theta_hat: np.ndarray, n: int, d: int, ridge: float, device: str) -> Problem:
    """The first n training rows of dimension d, with theta_hat and H = X^T diag(l''(X theta_hat)) X + ridge I."""
    X, y = (torch.as_tensor(a, dtype=torch.float64, device=device) for a in load_split(data, d, "train", n))
    theta = torch.as_tensor(theta_hat, dtype=torch.float64, device=device)
    H = hessian(X, y, torch.ones(1, n, dtype=X.dtype, device=device), theta.unsqueeze(0), LOSS, ridge)[0]
    return Problem(n=n, d=d, X=X, y=y, theta_hat=theta, H=H)


def problems(data: Path, subsets: Path, fits: Path, ridge: float, device: str) -> Iterator[tuple[Problem, pa.Table]]:
    """Each (n, d) problem of the fits table with its rows of the subsets table (all k and kinds); the arguments
    are the paths of the data, subsets and fits tables."""
    table = pq.read_table(subsets)
    theta_hats = read_fits(fits)
    for n, d in sorted(theta_hats):
        rows = table.filter(pc.and_(pc.equal(table["n"], n), pc.equal(table["d"], d)))
        if rows.num_rows:
            yield load_problem(data, theta_hats[(n, d)], n, d, ridge, device), rows


def cells(rows: pa.Table, device: str) -> Iterator[tuple[int, str, pa.Table, Tensor]]:
    """(k, kind, rows, idx) for each removal cell of one problem; idx is the (subsets x k) index tensor."""
    for k in sorted(set(rows["k"].to_pylist())):
        for kind in sorted(set(rows["kind"].to_pylist())):
            cell = rows.filter(pc.and_(pc.equal(rows["k"], k), pc.equal(rows["kind"], kind)))
            if cell.num_rows:
                yield k, kind, cell, torch.as_tensor(subset_indices(cell), device=device)
