"""Seed batching: S independently initialised networks of one architecture held as one network whose every parameter
has a leading seed axis, so that one training step of all S costs one batched step instead of S small ones.

Seed s's layers act only on seed s's inputs (x has shape (S, B, ...)):
  SeedLinear:     y_s = x_s W_s^T + b_s      (W^T: S x in x out, b: S x out; one batched matmul, baddbmm);
  SeedEmbedding:  y_s = E_s[i_s]             (E: S x n x d);
  SeedLayerNorm:  y_s = g_s LN(x_s) + b_s    (g, b: S x d).
Every other layer (LayerNorm without affine weights, SiLU, sums) acts on the last axis and needs no change. The loss
is the sum over seeds of each seed's own loss, so seed s's gradient is that of its own loss; Adam and the weight
average are elementwise, so each seed keeps its own optimiser state: per seed, the same math as S separate runs.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class SeedLinear(nn.Module):
    """S affine maps, seed s applied to x[s]: (S, B, d_in) -> (S, B, d_out). The weight is stored transposed,
    (S, d_in, d_out), so that its gradient x^T g comes out in its own layout; zero-initialised (see stack)."""

    def __init__(self, n_seeds: int, d_in: int, d_out: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(n_seeds, d_in, d_out))
        self.bias = nn.Parameter(torch.zeros(n_seeds, d_out))

    def forward(self, x: Tensor) -> Tensor:
        return torch.baddbmm(self.bias[:, None], x, self.weight)


class SeedEmbedding(nn.Module):
    """S lookup tables, seed s's table read at indices i[s]: (S, B) -> (S, B, d). Zero-initialised like SeedLinear."""

    def __init__(self, n_seeds: int, n: int, d: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(n_seeds, n, d))

    def forward(self, i: Tensor) -> Tensor:
        return self.weight[torch.arange(len(self.weight), device=i.device)[:, None], i]


class SeedLayerNorm(nn.Module):
    """S layer norms with their own gains and offsets: y_s = g_s * LN(x_s) + b_s (LN over the last axis). Initialised
    like nn.LayerNorm (g = 1, b = 0)."""

    def __init__(self, n_seeds: int, d: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n_seeds, d))
        self.bias = nn.Parameter(torch.zeros(n_seeds, d))

    def forward(self, x: Tensor) -> Tensor:
        return torch.addcmul(self.bias[:, None], nn.functional.layer_norm(x, x.shape[-1:]), self.weight[:, None])


def linear(d_in: int, d_out: int, n_seeds: int | None) -> nn.Module:
    """nn.Linear for one network (n_seeds None), SeedLinear for n_seeds of them."""
    return nn.Linear(d_in, d_out) if n_seeds is None else SeedLinear(n_seeds, d_in, d_out)


def embedding(n: int, d: int, n_seeds: int | None) -> nn.Module:
    """nn.Embedding for one network (n_seeds None), SeedEmbedding for n_seeds of them."""
    return nn.Embedding(n, d) if n_seeds is None else SeedEmbedding(n_seeds, n, d)


def layer_norm(d: int, n_seeds: int | None) -> nn.Module:
    """nn.LayerNorm for one network (n_seeds None), SeedLayerNorm for n_seeds of them."""
    return nn.LayerNorm(d) if n_seeds is None else SeedLayerNorm(n_seeds, d)


def _transposed(batched: nn.Module, name: str) -> bool:
    """Whether state entry ``name`` of ``batched`` is a SeedLinear weight (stored transposed to nn.Linear's)."""
    return name.endswith(".weight") and isinstance(batched.get_submodule(name.rpartition(".")[0]), SeedLinear)


@torch.no_grad()
def stack(batched: nn.Module, nets: list[nn.Module]) -> None:
    """Load nets[s] into seed s of ``batched`` (built with n_seeds = len(nets), the same architecture otherwise)."""
    states = [n.state_dict() for n in nets]
    for name, tensor in batched.state_dict().items():
        tensor.copy_(torch.stack([s[name].T if _transposed(batched, name) else s[name] for s in states]))


def seed_state(batched: nn.Module, s: int) -> dict[str, Tensor]:
    """Seed s's own state dict out of ``batched`` (copies, in the layout of the one-network modules)."""
    return {name: (v[s].T if _transposed(batched, name) else v[s]).clone() for name, v in batched.state_dict().items()}
