"""The Sinkhorn-Knopp projection onto the Birkhoff polytope and the manifold check of its output.

    M^(0) = exp(L);   M^(2k+1) = M^(2k) / (M^(2k) 1) 1^T   (rows sum to 1);
                      M^(2k+2) = M^(2k+1) / 1 (1^T M^(2k+1)) (columns sum to 1);   SK_t(L) = M^(2t)

(Sinkhorn & Knopp 1967, Pacific J. Math.). Every entry is positive; after the last column step the column sums are
1 up to rounding and the row sums converge to 1 geometrically in t. mHC (Xie et al. 2025) uses t = 20.

``sinkhorn_knopp`` computes the same map in the log domain, l^(k) = l^(k-1) - logsumexp(l^(k-1)) along the rows, then
the columns (M^(k) = exp(l^(k))), as the numerically stable form of Sinkhorn's iterations (Peyre & Cuturi,
Computational Optimal Transport, 2019, Sec. 4.4): in float32 the probability-domain loop loses a row or column once
the logits of one matrix spread over more than ~87 (exp underflows), and its reverse pass divides by that vanishing
sum (a stressed mHC run's logits spread up to ~139 and its gradient became NaN with the loss still finite).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


def sinkhorn_reference(logits: torch.Tensor, iters: int) -> torch.Tensor:
    """SK_t(L) over the last two dims of ``logits`` (..., n, n), written as the plain probability-domain loop
    (differentiated by autograd; the oracle for ``sinkhorn_knopp``, exact in float64 for moderate logits). The max is
    subtracted first: SK is invariant to a constant shift of L."""
    m = torch.exp(logits - logits.amax(dim=(-2, -1), keepdim=True))
    for _ in range(iters):
        m = m / m.sum(dim=-1, keepdim=True)
        m = m / m.sum(dim=-2, keepdim=True)
    return m


class _Sinkhorn(torch.autograd.Function):
    """SK_t in the log domain on matrices stored as (n, n, N) (the N matrices innermost, so every row and column
    reduction runs over contiguous slabs): l^(k) = l^(k-1) - logsumexp_d l^(k-1), d the rows, then the columns, and
    SK_t(L) = exp(l^(2t)). Its reverse pass is division-free: with M^(k) = exp(l^(k)) = softmax_d(l^(k-1)),
        dL/dl^(k-1) = dL/dl^(k) - M^(k) sum_d dL/dl^(k),      dL/dl^(2t) = dL/dM^(2t) * M^(2t).
    """

    @staticmethod
    def forward(ctx, logits: torch.Tensor, iters: int) -> torch.Tensor:
        log_m, saved = logits, []
        for _ in range(iters):
            for dim in (1, 0):
                log_m = log_m - torch.logsumexp(log_m, dim, keepdim=True)
                saved.append(log_m.exp())
        ctx.save_for_backward(*saved)
        return saved[-1]

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        saved = ctx.saved_tensors  # M^(1), ..., M^(2t): odd steps normalised the rows (dim 1), even the columns
        grad = grad * saved[-1]
        for k in range(len(saved) - 1, -1, -1):
            grad = grad - saved[k] * grad.sum(1 if k % 2 == 0 else 0, keepdim=True)
        return grad, None


def sinkhorn_knopp(logits: torch.Tensor, iters: int) -> torch.Tensor:
    """SK_t(L) over the last two dims of ``logits`` (..., n, n), in the log domain (``_Sinkhorn``); equal to
    ``sinkhorn_reference`` (values and gradients) where that loop is finite, and finite where it is not."""
    flat = logits.reshape(-1, *logits.shape[-2:]).permute(1, 2, 0).contiguous()
    return _Sinkhorn.apply(flat, iters).permute(2, 0, 1).reshape(logits.shape)


@dataclass(frozen=True)
class ManifoldCheck:
    """Worst case over a batch of matrices: max |row sum - 1|, max |column sum - 1|, min entry; ``passed`` when
    both deviations are <= tol and the min entry is >= 0."""

    max_row_dev: float
    max_col_dev: float
    min_entry: float
    tol: float

    @property
    def passed(self) -> bool:
        return self.max_row_dev <= self.tol and self.max_col_dev <= self.tol and self.min_entry >= 0.0


def check_doubly_stochastic(mats: torch.Tensor, tol: float) -> ManifoldCheck:
    """Exact check of every matrix in ``mats`` (..., n, n) in float64: |M 1 - 1|_inf, |1^T M - 1|_inf, min M_ij."""
    m = mats.double()
    return ManifoldCheck(float((m.sum(-1) - 1).abs().max()), float((m.sum(-2) - 1).abs().max()), float(m.min()), tol)
