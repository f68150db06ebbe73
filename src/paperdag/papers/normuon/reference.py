"""Row-norm uniformity of structureless orthogonalised matrices: the references Muon's update row-norm CV is
judged against (is the non-uniformity a finding about Muon's updates, or what any orthogonal matrix of that shape
shows?).

The CV of a matrix D is std(r) / mean(r) over its row norms r_i = ||D_i||_2 (``training.row_norm_cv``, population
std), averaged over the model's hidden matrices exactly as the training curves average it.

1. A Haar-random semi-orthogonal Q of shape (m, n):
   - m <= n: Q Q^T = I_m, every row has unit norm: CV = 0 exactly;
   - m > n: Q^T Q = I_n; Q is the first n columns of a Haar orthogonal m x m matrix, so each row is the first n
     coordinates of a uniform unit vector of R^m: X_i = ||q_i||^2 ~ Beta(a, b), a = n/2, b = (m - n)/2 (and
     sum_i X_i = n). With E X = a / (a + b) = n / m and E sqrt(X) = B(a + 1/2, b) / B(a, b), the marginal CV of
     ||q_i|| is  CV_inf = sqrt(E X / (E sqrt X)^2 - 1)  (closed form; the m -> inf limit of the within-matrix CV).
   Sampled: Q from the QR of a Gaussian matrix with the signs of diag(R) folded into Q (Mezzadri 2007: Haar).
2. Muon's own orthogonaliser on a structureless momentum: NS5(G) of a Gaussian G of the same shape (the quintic
   Newton-Schulz iteration leaves singular values in ~[0.7, 1.2], not at 1, so its rows are less uniform than an
   exact semi-orthogonal matrix's): the non-uniformity NS5 makes without any gradient structure.

Each reference is sampled with a seeded generator, one value per draw (a fresh matrix for every hidden matrix),
so it carries its own interval over draws.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from scipy.special import betaln

from paperdag.common.transformer import GPT, GPTConfig

from .optim import newton_schulz5
from .training import row_norm_cv

REFERENCES = ("semi-orthogonal", "NS5 of Gaussian")


def hidden_shapes(cfg: GPTConfig) -> list[tuple[int, int]]:
    """Shapes (rows, cols) of the model's hidden matrices, in ``GPT.hidden_matrices`` order (the matrices whose
    update row CVs the training curves average)."""
    return [tuple(p.shape) for p in GPT(cfg).hidden_matrices()]


def semi_orthogonal_row_cv(m: int, n: int) -> float:
    """Closed form CV_inf of the row norms of a Haar semi-orthogonal m x n matrix (0 when m <= n; module doc)."""
    if m <= n:
        return 0.0
    a, b = n / 2, (m - n) / 2
    mean_sqrt = math.exp(betaln(a + 0.5, b) - betaln(a, b))
    return math.sqrt((n / m) / mean_sqrt**2 - 1)


def haar_semi_orthogonal(m: int, n: int, gen: torch.Generator) -> torch.Tensor:
    """A Haar-random m x n matrix with orthonormal columns (m >= n) or rows (m < n): QR of a Gaussian, signs of
    diag(R) folded into Q."""
    tall = m >= n
    g = torch.randn((m, n) if tall else (n, m), generator=gen, dtype=torch.float64)
    q, r = torch.linalg.qr(g)
    q = q * torch.sign(torch.diagonal(r)).unsqueeze(0)
    return q if tall else q.T


def reference_row_cvs(shapes: list[tuple[int, int]], draws: int, seed: int, kind: str) -> np.ndarray:
    """``draws`` values, each sum_s w_s row_norm_cv(M_s) over the distinct shapes s of ``shapes`` (w_s: the share of
    the hidden matrices with that shape), M_s a fresh structureless matrix: ``kind`` "semi-orthogonal"
    (``haar_semi_orthogonal``) or "NS5 of Gaussian" (``newton_schulz5`` of a standard Gaussian matrix, float32 as
    Muon runs it on the CPU). Its expectation is that of the mean over the hidden matrices, as the curves average."""
    if kind not in REFERENCES:
        raise ValueError(f"unknown reference {kind!r} (known: {', '.join(REFERENCES)})")
    distinct = sorted(set(shapes))
    weights = np.array([shapes.count(s) for s in distinct], dtype=float) / len(shapes)
    gen = torch.Generator().manual_seed(seed)
    out = np.empty(draws)
    for i in range(draws):
        cvs = []
        for m, n in distinct:
            if kind == "semi-orthogonal":
                mat = haar_semi_orthogonal(m, n, gen)
            else:
                mat = newton_schulz5(torch.randn((m, n), generator=gen, dtype=torch.float32))
            cvs.append(row_norm_cv(mat))
        out[i] = float(weights @ np.asarray(cvs))
    return out
