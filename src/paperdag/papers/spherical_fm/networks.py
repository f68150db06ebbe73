"""The networks: a time-conditioned MLP velocity field shared by every generator, and an MLP digit classifier whose
penultimate layer is the feature space of the sample-quality metrics (no pretrained Inception)."""

from __future__ import annotations

import copy
import math

import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap


def time_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """[sin(w_k t), cos(w_k t)]_k with w_k = 1000^(k / (dim/2 - 1)), k = 0 .. dim/2 - 1 (Fourier features)."""
    half = dim // 2
    w = torch.exp(torch.linspace(0.0, math.log(1000.0), half, device=t.device))
    return torch.cat([torch.sin(t[:, None] * w), torch.cos(t[:, None] * w)], dim=1)


def mlp(sizes: list[int]) -> nn.Sequential:
    """Linear layers of the given widths with SiLU between them (none after the last)."""
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [nn.Linear(a, b), nn.SiLU()]
    return nn.Sequential(*layers[:-1])


class VelocityMLP(nn.Module):
    """v(x, t) = W_out LN(h_L) with residual blocks h_{l+1} = h_l + W2 SiLU(W1 LN(h_l) + E_l emb(t)), h_0 = W_in x:
    a time-conditioned residual MLP with ``depth`` blocks of width ``hidden``."""

    def __init__(self, dim: int, hidden: int, depth: int, time_dim: int) -> None:
        super().__init__()
        self.time_dim = time_dim
        self.inp = nn.Linear(dim, hidden)
        self.norms = nn.ModuleList(nn.LayerNorm(hidden) for _ in range(depth))
        self.w1 = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(depth))
        self.emb = nn.ModuleList(nn.Linear(time_dim, hidden) for _ in range(depth))
        self.w2 = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(depth))
        self.out = nn.Sequential(nn.LayerNorm(hidden), nn.Linear(hidden, dim))

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """v(x, t) for rows x [n, dim] at times t [n]."""
        e, h = time_embedding(t, self.time_dim), self.inp(x)
        for norm, w1, emb, w2 in zip(self.norms, self.w1, self.emb, self.w2, strict=True):
            h = h + w2(nn.functional.silu(w1(norm(h)) + emb(e)))
        return self.out(h)


class SeedBatch:
    """S networks of one architecture (one per training seed) as one field: the parameters of each stacked along a
    leading seed axis and the forward pass vectorised over it (torch.func.vmap), so v(x, t) for x [S, n, d] and t
    [S, n] evaluates seed s's network on slice s. Seed s's output and gradient are those of its own network (the
    seeds share no parameter), in one batched matrix product per layer instead of S."""

    def __init__(self, nets: list[nn.Module]) -> None:
        self.params, self._buffers = stack_module_state(nets)
        base = copy.deepcopy(nets[0]).to("meta")
        self._forward = vmap(lambda p, b, x, t: functional_call(base, (p, b), (x, t)))

    def __call__(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self._forward(self.params, self._buffers, x, t)

    def state_dicts(self) -> list[dict[str, torch.Tensor]]:
        """Each seed's parameters as a state dict of its own network."""
        n = len(next(iter(self.params.values())))
        return [{k: v[s].detach().clone() for k, v in (self.params | self._buffers).items()} for s in range(n)]


class Classifier(nn.Module):
    """logits = W f(x) + b with features f(x) = MLP(x) of width ``feat_dim`` after two hidden layers."""

    def __init__(self, dim: int, hidden: int, feat_dim: int, n_classes: int = 10) -> None:
        super().__init__()
        self.body = nn.Sequential(mlp([dim, hidden, hidden, feat_dim]), nn.SiLU())
        self.head = nn.Linear(feat_dim, n_classes)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """f(x): the feature (penultimate) layer, the space of the sample-quality metrics."""
        return self.body(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """logits W f(x) + b."""
        return self.head(self.body(x))


class ConvAutoencoder(nn.Module):
    """x_hat = D(E(x)) for flattened c x c RGB crops (row-major [c, c, 3], values in [-1, 1]); c a multiple of 4.
    E: conv3x3 (3 -> w) SiLU, conv4x4 stride 2 (w -> 2w) SiLU, conv4x4 stride 2 (2w -> 4w) SiLU, flatten, linear
    (4w (c/4)^2 -> k). D mirrors it: linear (k -> 4w (c/4)^2) SiLU, transposed conv4x4 stride 2 (4w -> 2w) SiLU,
    transposed conv4x4 stride 2 (2w -> w) SiLU, conv3x3 (w -> 3), tanh (back to [-1, 1])."""

    def __init__(self, side: int, width: int, latent_dim: int) -> None:
        super().__init__()
        self.side, self.width, q = side, width, side // 4
        self.encoder = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1), nn.SiLU(), nn.Conv2d(width, 2 * width, 4, 2, 1), nn.SiLU(),
            nn.Conv2d(2 * width, 4 * width, 4, 2, 1), nn.SiLU(), nn.Flatten(), nn.Linear(4 * width * q * q, latent_dim))
        self.decoder = nn.Sequential(
            nn.Linear(latent_dim, 4 * width * q * q), nn.SiLU(), nn.Unflatten(1, (4 * width, q, q)),
            nn.ConvTranspose2d(4 * width, 2 * width, 4, 2, 1), nn.SiLU(), nn.ConvTranspose2d(2 * width, width, 4, 2, 1),
            nn.SiLU(), nn.Conv2d(width, 3, 3, padding=1), nn.Tanh())

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """E(x): rows [n, 3 c^2] -> codes [n, k]."""
        return self.encoder(x.reshape(-1, self.side, self.side, 3).permute(0, 3, 1, 2))

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        """D(z): codes [..., k] -> rows [..., 3 c^2] in [-1, 1] (row-major [c, c, 3], as the crops)."""
        out = self.decoder(z.reshape(-1, z.shape[-1])).permute(0, 2, 3, 1)
        return out.reshape(*z.shape[:-1], 3 * self.side * self.side)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """D(E(x))."""
        return self.decode(self.encode(x))
