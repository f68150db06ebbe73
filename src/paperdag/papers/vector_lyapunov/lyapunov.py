"""The neural Lyapunov function shared by every certificate, and its level-set constants.

    V(x) = || W2 relu(W1 y) + W3 y ||_1 + eps ||y||_1,   y = x / scale

is positive definite (V(0) = 0, V(x) >= eps ||y||_1 > 0 for x != 0) and, bias-free, positively homogeneous
(V(lambda x) = lambda V(x) for lambda >= 0). Level-set constants on the state box B = [-b, b]:
c_0 = min of V over the boundary of B, so {V <= c} lies in (c / c_0) B, and c_1 = max of V over B.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from .verifier.bounds import output_bounds
from .verifier.graph import Builder, MaskedNet, Sym
from .verifier.milp import solve_on_box


class Cert(nn.Module):
    """V(x) = ||W2 relu(W1 y) + W3 y||_1 + eps ||y||_1, y = x / scale (bias-free, positive definite).

    The linear skip W3 (initialised to a random +-1 mixing) makes V start as a polyhedral norm instead of
    vanishing on the cone where every ReLU is off; hidden = 0 keeps only it (a polyhedral norm, |.| = 2 ReLUs)."""

    def __init__(self, scale: list[float], hidden: int, feat: int, eps: float):
        super().__init__()
        d = len(scale)
        self.register_buffer("scale", torch.tensor(scale, dtype=torch.float64))
        self.l1 = nn.Linear(d, hidden, bias=False, dtype=torch.float64) if hidden else None
        self.l2 = nn.Linear(hidden, feat, bias=False, dtype=torch.float64) if hidden else None
        self.skip = nn.Linear(d, feat, bias=False, dtype=torch.float64)
        with torch.no_grad():
            self.skip.weight.copy_(torch.sign(torch.randn(feat, d, dtype=torch.float64)) / feat)
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x / self.scale
        phi = self.skip(y) if self.l1 is None else self.l2(torch.relu(self.l1(y))) + self.skip(y)
        return phi.abs().sum(-1) + self.eps * y.abs().sum(-1)

    def compile(self, b: Builder, x: Sym) -> Sym:
        """The same function traced into a Builder."""
        y = b.linear(x, np.diag(1.0 / self.scale.numpy()))
        phi = b.linear(y, self.skip.weight.detach().numpy())
        if self.l1 is not None:
            phi = b.add(b.mlp(y, [self.l1.weight.detach().numpy(), self.l2.weight.detach().numpy()]), phi)
        k, d = len(phi), len(y)
        return b.add(b.linear(b.abs(phi), np.ones((1, k))), b.linear(b.abs(y), self.eps * np.ones((1, d))))


def compile_cert(V: Cert) -> MaskedNet:
    """V alone as a masked ReLU net x -> V(x)."""
    b = Builder(len(V.scale))
    return b.build(V.compile(b, b.input(list(range(len(V.scale))))))


def level_constants(V: Cert, box: np.ndarray, exact: bool = True) -> tuple[float, float]:
    """(c_0, c_1): a sound lower bound of min of V over the boundary faces of the box, and a sound upper bound of
    max of V over the box. exact: solve one MILP per face (tight); else one batched CROWN pass (cheap, looser)."""
    net = compile_cert(V)
    faces = []
    for d in range(len(box)):
        for s in (-1.0, 1.0):
            lo, hi = -box.copy(), box.copy()
            lo[d] = hi[d] = s * box[d]
            faces.append((lo, hi))
    one = np.ones(1)
    if exact:
        c1 = solve_on_box(net, -box, box, one).bound
        c0 = min(solve_on_box(net, lo, hi, one, sense="min").bound for lo, hi in faces)
        return float(c0), float(c1)
    lo = torch.as_tensor(np.stack([f[0] for f in faces] + [-box]))
    hi = torch.as_tensor(np.stack([f[1] for f in faces] + [box]))
    C = torch.tensor([[1.0], [-1.0]], dtype=torch.float64)
    ub = output_bounds(net, lo, hi, C)[0].numpy()
    return float((-ub[:-1, 1]).min()), float(ub[-1, 0])


def norm_rows(V: Cert) -> np.ndarray:
    """K with V(x) = sum_r |(K x)_r| for a certificate with no hidden layer (a polyhedral norm): the rows of
    W diag(1 / scale) and eps diag(1 / scale)."""
    if V.l1 is not None:
        raise ValueError("norm_rows needs a certificate without hidden layer (a polyhedral norm)")
    inv = np.diag(1.0 / V.scale.numpy())
    return np.concatenate([V.skip.weight.detach().numpy() @ inv, V.eps * inv])
