"""The multi-index task: x ~ N(0, I_d), y = g(U^T x) with U in R^{d x r} orthonormal and a quadratic link.

Link (second Hermite polynomials plus a nearest-neighbour interaction), z = U^T x in R^r:
    g(z) = z^T C z - tr C,   C = c (I_r + J / 2),   J_kl = 1 if |k - l| = 1 else 0,
i.e. g(z) = c (sum_k He_2(z_k) + sum_k z_k z_{k+1}), with c chosen so Var g = 2 ||C||_F^2 = 1. In x-coordinates
y = x^T A x - tr A with A = U C U^T, whose Hermite-2 matrix H = E[y (x x^T - I)] = 2 A lies in span(U).
Every draw uses its own generator ``numpy.random.SeedSequence([seed, d, r, stream])``, so a cell does not depend on
the grid it is part of.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

STREAMS = {"basis": 0, "phase1": 1, "phase2": 2, "test": 3}


def task_rng(seed: int, d: int, r: int, stream: str) -> np.random.Generator:
    """An independent PCG64 generator for one (seed, d, r) task and one named stream of draws."""
    return np.random.default_rng(np.random.SeedSequence([seed, d, r, STREAMS[stream]]))


def link_matrix(r: int) -> np.ndarray:
    """C = c (I_r + J / 2) with 2 ||C||_F^2 = 1 (unit label variance)."""
    C = np.eye(r) + 0.5 * (np.eye(r, k=1) + np.eye(r, k=-1))
    return C / np.sqrt(2.0 * np.sum(C**2))


def random_basis(rng: np.random.Generator, d: int, r: int) -> np.ndarray:
    """U in R^{d x r} with orthonormal columns, Haar-distributed (QR of a Gaussian matrix, signs fixed by R)."""
    Q, R = np.linalg.qr(rng.standard_normal((d, r)))
    return Q * np.sign(np.diag(R))


@dataclass(frozen=True)
class Task:
    """One multi-index task: basis U (d x r) and link matrix C (r x r); A = U C U^T."""

    U: Tensor
    C: Tensor

    @property
    def A(self) -> Tensor:
        return self.U @ self.C @ self.U.T

    def labels(self, X: Tensor) -> Tensor:
        """y = z^T C z - tr C with z = U^T x, for each row x of X."""
        Z = X @ self.U
        return ((Z @ self.C) * Z).sum(1) - torch.trace(self.C)

    def sample(self, rng: np.random.Generator, n: int) -> tuple[Tensor, Tensor]:
        """(X, y): n rows x ~ N(0, I_d) and their labels, in the task's dtype and device."""
        X = torch.as_tensor(rng.standard_normal((n, self.U.shape[0])), dtype=self.U.dtype, device=self.U.device)
        return X, self.labels(X)


def make_task(seed: int, d: int, r: int, device: str = "cpu", dtype: torch.dtype = torch.float64) -> Task:
    """The task of cell (d, r) for ``seed``: U from the cell's ``basis`` stream, C = link_matrix(r)."""
    U = random_basis(task_rng(seed, d, r, "basis"), d, r)
    C = link_matrix(r)
    return Task(torch.as_tensor(U, dtype=dtype, device=device), torch.as_tensor(C, dtype=dtype, device=device))


def span_energy(X: Tensor, U: Tensor) -> float:
    """||P_U X^T||_F^2 / ||X||_F^2: the fraction of the rows' energy inside span(U) (r / d for isotropic rows)."""
    return float((X @ U).pow(2).sum() / X.pow(2).sum())


def principal_angles(X: Tensor, U: Tensor) -> np.ndarray:
    """Principal angles (radians, ascending) between span(U) and the top-r right singular subspace of X."""
    from scipy.linalg import subspace_angles

    r = U.shape[1]
    V = torch.linalg.svd(X, full_matrices=False).Vh[:r].T
    return np.sort(subspace_angles(V.cpu().numpy(), U.cpu().numpy()))
