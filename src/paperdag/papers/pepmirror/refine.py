"""Chirality-neutral backbone refinement of sampled designs (the analogue of idealising a generated backbone).

Energy, a function of interatomic distances only (so E(Qx) = E(x) for every orthogonal Q, reflections included):
    E = sum_bonds (d - d0)^2 + sum_1-3 pairs (d - d0)^2 + sum_{pep-pocket} relu(r_clash - d)^2
        + sum_{CA_i, CA_j, |i-j|>=2} relu(3.8 - d)^2 + w_restraint |x - x_sampled|^2
        + sum_i (V_i(x) - sign(V_i(x_sampled)) V0)^2,
V_i the chirality volume ((N - CA) x (C - CA)) . (CB - CA), V0 = 2.5 A^3 (ideal residue). V and its sign are both
pseudoscalars, so the last term is reflection-invariant too: every residue keeps the hand the sampler gave it
(however small its volume) and gets ideal geometry. L-BFGS uses only inner products and linear combinations of
gradients, so refine(Px) = P refine(x): refinement fixes bonds and chain breaks but can never choose a hand.
"""

from __future__ import annotations

import torch
from torch import Tensor

# (atom a, atom b, residue offset of b, ideal distance A); atoms 0 N, 1 CA, 2 C, 3 CB (Engh & Huber geometry)
PAIRS = ((0, 1, 0, 1.458), (1, 2, 0, 1.525), (1, 3, 0, 1.530), (2, 0, 1, 1.329),
         (0, 2, 0, 2.460), (0, 3, 0, 2.450), (2, 3, 0, 2.500), (1, 0, 1, 2.430), (2, 1, 1, 2.440))
W_RESTRAINT = 0.05
V0 = 2.5


def chirality_volume(x: Tensor) -> Tensor:
    """((N - CA) x (C - CA)) . (CB - CA) per residue of x [..., 4, 3]."""
    ca = x[..., 1, :]
    return (torch.cross(x[..., 0, :] - ca, x[..., 2, :] - ca, dim=-1) * (x[..., 3, :] - ca)).sum(-1)


def energy(x: Tensor, x_ref: Tensor, mask: Tensor, pocket: Tensor, pocket_mask: Tensor, clash: float) -> Tensor:
    """Sum of the terms above over a batch: x, x_ref [B, P, 4, 3], mask [B, P], pocket [B, K, 4, 3]."""
    e = W_RESTRAINT * (((x - x_ref) ** 2).sum(-1) * mask[..., None]).sum()
    e = e + ((chirality_volume(x) - torch.sign(chirality_volume(x_ref)) * V0) ** 2 * mask).sum()
    for a, b, off, d0 in PAIRS:
        xa, xb = x[:, : x.shape[1] - off, a], x[:, off:, b]
        m = mask[:, : x.shape[1] - off] * mask[:, off:]
        e = e + (((xa - xb).norm(dim=-1) - d0) ** 2 * m).sum()
    d = (x.reshape(x.shape[0], -1, 1, 3) - pocket.reshape(pocket.shape[0], 1, -1, 3)).norm(dim=-1)
    mm = mask.repeat_interleave(4, 1)[:, :, None] * pocket_mask.repeat_interleave(4, 1)[:, None, :]
    e = e + (torch.relu(clash - d) ** 2 * mm).sum()
    ca = x[:, :, 1]
    dca = (ca[:, :, None] - ca[:, None]).norm(dim=-1)
    idx = torch.arange(x.shape[1], device=x.device)
    far = ((idx[:, None] - idx[None]).abs() >= 2).to(x.dtype) * mask[:, :, None] * mask[:, None, :]
    return e + 0.5 * (torch.relu(3.8 - dca) ** 2 * far).sum()


def refine(x: Tensor, mask: Tensor, pocket: Tensor, pocket_mask: Tensor, clash: float = 3.0, iters: int = 100
           ) -> Tensor:
    """L-BFGS (strong Wolfe line search) on ``energy`` starting from the sampled coordinates (float64)."""
    x_ref = x.detach().double()
    y = x_ref.clone().requires_grad_(True)
    args = (x_ref, mask.double(), pocket.double(), pocket_mask.double(), clash)
    opt = torch.optim.LBFGS([y], max_iter=iters, line_search_fn="strong_wolfe", tolerance_grad=1e-9,
                            tolerance_change=1e-12, history_size=20)

    def closure() -> Tensor:
        opt.zero_grad()
        e = energy(y, *args)
        e.backward()
        return e

    opt.step(closure)
    return (y.detach() * mask.double()[..., None, None]).to(x.dtype)
