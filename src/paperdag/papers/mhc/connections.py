"""The three ways a sub-layer F writes back into the residual stream (one stream of width C, or n streams x in
R^{n x C} per token):

    residual (He et al. 2016):          x_{l+1} = x_l + F(Norm(x_l))                              (n = 1)
    hyper-connection, HC (Zhu et al. 2024, "Hyper-Connections", arXiv:2409.19606), per token, x~ = RMSNorm(x_l):
        H_pre = a_pre tanh(theta_pre x~^T) + b_pre  (1 x n),  H_post = a_post tanh(theta_post x~^T) + b_post  (1 x n),
        H_res = a_res tanh(theta_res x~^T) + b_res  (n x n)                                   (unconstrained)
    manifold-constrained HC, mHC (Xie et al. 2025, arXiv:2512.24880), x~ = RMSNorm(vec(x_l)) in R^{1 x nC}:
        H_pre = sigmoid(a_pre x~ phi_pre + b_pre),  H_post = 2 sigmoid(a_post x~ phi_post + b_post),
        H_res = SK_t(a_res mat(x~ phi_res) + b_res)                                           (doubly stochastic)
    and for both:  x_{l+1} = H_res x_l + H_post^T F(Norm(H_pre x_l)).

Both start from the same maps (``initial_maps``): H_res = (1 - s) I + s J / n, H_pre = (1 - s) e_k + s 1 / n with
k = l mod n (layer l reads mostly from stream k, as in HC's initialisation), H_post = 1; theta and phi start at 0
and the gates a at ``gate_init`` (HC's and mHC's small-gate initialisation).
"""

from __future__ import annotations

import torch
from torch import nn

from paperdag.common.transformer import RMSNorm

from .sinkhorn import sinkhorn_knopp

Maps = tuple[torch.Tensor, torch.Tensor, torch.Tensor]  # H_pre (..., n), H_post (..., n), H_res (..., n, n)


def initial_maps(n: int, layer: int, mix: float) -> Maps:
    """(H_pre, H_post, H_res) at initialisation: (1 - s) e_k + s/n, ones, (1 - s) I + s J / n (k = layer mod n)."""
    e = torch.zeros(n)
    e[layer % n] = 1.0
    return (1 - mix) * e + mix / n, torch.ones(n), (1 - mix) * torch.eye(n) + mix / n


class _MixStreams(torch.autograd.Function):
    """y = W z per token with W = [H_res | H_post^T] (n x (n + 1)) and z = [x; F] ((n + 1) x C), so that
    y = H_res x + H_post^T F is one batched matrix product; the reverse pass is the two products
    dL/dW = G z^T and dL/dz = W^T G on a contiguous G. (Autograd's own reverse of a broadcast product, or of a
    matmul whose incoming gradient is an expanded view, runs several times slower on CPU for these small
    matrices.)"""

    @staticmethod
    def forward(ctx, x: torch.Tensor, f_out: torch.Tensor, h_post: torch.Tensor, h_res: torch.Tensor) -> torch.Tensor:
        w = torch.cat([h_res, h_post.unsqueeze(-1)], -1)
        z = torch.cat([x, f_out.unsqueeze(-2)], -2)
        ctx.save_for_backward(w, z)
        return torch.matmul(w, z)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, ...]:
        w, z = ctx.saved_tensors
        grad = grad.contiguous()
        grad_w, grad_z = torch.matmul(grad, z.transpose(-2, -1)), torch.matmul(w.transpose(-2, -1), grad)
        n = w.shape[-2]
        return grad_z[..., :n, :], grad_z[..., n, :], grad_w[..., n], grad_w[..., :n]


def mix_streams(x: torch.Tensor, f_out: torch.Tensor, h_post: torch.Tensor, h_res: torch.Tensor) -> torch.Tensor:
    """H_res x + H_post^T F: x (..., n, C), f_out (..., C), h_post (..., n), h_res (..., n, n) -> (..., n, C)."""
    return _MixStreams.apply(x, f_out, h_post, h_res)


def read_in(x: torch.Tensor, h_pre: torch.Tensor) -> torch.Tensor:
    """H_pre x: the sub-layer's input, (..., n, C) with weights (..., n) -> (..., C)."""
    return torch.matmul(h_pre.unsqueeze(-2), x).squeeze(-2)


class HyperConnection(nn.Module):
    """HC's dynamic maps from the per-stream normalised x~ (n x C): one linear C -> 2 + n gives, per stream j,
    theta_pre x~_j, theta_post x~_j and the column (theta_res x~^T)_{:, j}."""

    def __init__(self, n: int, width: int, layer: int, mix: float, gate_init: float):
        super().__init__()
        self.n = n
        self.norm = RMSNorm(width)
        self.theta = nn.Linear(width, 2 + n, bias=False)
        nn.init.zeros_(self.theta.weight)
        self.gate = nn.Parameter(torch.full((3,), gate_init))
        pre, post, res = initial_maps(n, layer, mix)
        self.b_pre, self.b_post, self.b_res = nn.Parameter(pre), nn.Parameter(post), nn.Parameter(res)

    def forward(self, x: torch.Tensor) -> Maps:
        """(H_pre, H_post, H_res) per token for x (..., n, C)."""
        t = torch.tanh(self.theta(self.norm(x)))  # (..., n, 2 + n): row j is stream j
        h_pre = self.gate[0] * t[..., 0] + self.b_pre
        h_post = self.gate[1] * t[..., 1] + self.b_post
        h_res = self.gate[2] * t[..., 2:].transpose(-2, -1) + self.b_res  # (theta_res x~^T)_{ij} = theta_res_i . x~_j
        return h_pre, h_post, h_res


class ManifoldHyperConnection(nn.Module):
    """mHC's maps from the flattened, normalised stream x~ in R^{nC}: one linear nC -> 2n + n^2 (phi_pre, phi_post,
    phi_res), then sigmoid, 2 sigmoid and Sinkhorn-Knopp. Biases are the inverse images of ``initial_maps``."""

    def __init__(self, n: int, width: int, layer: int, mix: float, gate_init: float, sinkhorn_iters: int):
        super().__init__()
        self.n, self.iters = n, sinkhorn_iters
        self.norm = RMSNorm(n * width)
        self.phi = nn.Linear(n * width, 2 * n + n * n, bias=False)
        nn.init.zeros_(self.phi.weight)
        self.gate = nn.Parameter(torch.full((3,), gate_init))
        pre, post, res = initial_maps(n, layer, mix)
        self.b_pre = nn.Parameter(torch.logit(pre))
        self.b_post = nn.Parameter(torch.logit(post / 2))
        self.b_res = nn.Parameter(torch.log(res))  # SK(exp(log H)) = H for a doubly stochastic H

    def logits(self, x: torch.Tensor) -> Maps:
        """The pre-activation maps (a_pre x~ phi_pre + b_pre, a_post x~ phi_post + b_post, a_res mat(x~ phi_res) +
        b_res) for x (..., n, C)."""
        n = self.n
        z = self.phi(self.norm(x.flatten(-2)))
        res = z[..., 2 * n:].unflatten(-1, (n, n))
        return self.gate[0] * z[..., :n] + self.b_pre, self.gate[1] * z[..., n:2 * n] + self.b_post, \
            self.gate[2] * res + self.b_res

    def forward(self, x: torch.Tensor) -> Maps:
        """(sigmoid, 2 sigmoid, SK_t) of ``logits``."""
        pre, post, res = self.logits(x)
        return torch.sigmoid(pre), 2 * torch.sigmoid(post), sinkhorn_knopp(res, self.iters)
