"""SimCLR-style augmentations, batched in torch (no torchvision): random resized crop, horizontal flip, colour
jitter (brightness, contrast, saturation, hue) and random grayscale, every draw taken from one ``torch.Generator``
(reproducible on any device)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def _uniform(g: torch.Generator, n: int, lo: float, hi: float) -> torch.Tensor:
    return lo + (hi - lo) * torch.rand(n, generator=g)


def resized_crop_flip(x: torch.Tensor, g: torch.Generator, min_scale: float, flip: bool) -> torch.Tensor:
    """Crop area fraction s ~ U(min_scale, 1), aspect ratio r with log r ~ U(log 3/4, log 4/3), centre uniform where
    the crop fits, resized back to the input size by bilinear sampling (``affine_grid`` with
    theta = [[f w, 0, t_x], [0, h, t_y]]; with ``flip``, f = -1 or 1 with probability 1/2, the horizontal flip,
    else f = 1; the flip coin is drawn either way, so the other draws do not depend on ``flip``)."""
    n = len(x)
    s, log_r = _uniform(g, n, min_scale, 1.0), _uniform(g, n, math.log(3 / 4), math.log(4 / 3))
    w, h = (s * log_r.exp()).sqrt().clamp(max=1.0), (s / log_r.exp()).sqrt().clamp(max=1.0)
    tx, ty = (1 - w) * (2 * torch.rand(n, generator=g) - 1), (1 - h) * (2 * torch.rand(n, generator=g) - 1)
    coin = torch.rand(n, generator=g)
    sign = torch.where(coin < 0.5, -1.0, 1.0) if flip else torch.ones(n)
    theta = torch.zeros(n, 2, 3)
    theta[:, 0, 0], theta[:, 0, 2], theta[:, 1, 1], theta[:, 1, 2] = sign * w, tx, h, ty
    grid = F.affine_grid(theta.to(x.device, x.dtype), list(x.shape), align_corners=False)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="reflection", align_corners=False)


def hue_rotate(x: torch.Tensor, angle: torch.Tensor) -> torch.Tensor:
    """x <- clip(R(theta) x): rotation of every RGB pixel by ``angle`` theta (one per image) about the grey axis
    u = (1, 1, 1) / sqrt 3 (Rodrigues: R = cos theta I + sin theta [u]_x + (1 - cos theta) u u^T), a hue shift
    that keeps the grey component."""
    u = torch.full((3,), 3 ** -0.5, device=x.device, dtype=x.dtype)
    cross = torch.tensor([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]], device=x.device, dtype=x.dtype)
    cos, sin = angle.cos().view(-1, 1, 1), angle.sin().view(-1, 1, 1)
    rot = cos * torch.eye(3, device=x.device, dtype=x.dtype) + sin * cross * 3 ** -0.5 + (1 - cos) * torch.outer(u, u)
    return torch.einsum("nij,njhw->nihw", rot, x).clamp(0, 1)


def colour_jitter(x: torch.Tensor, g: torch.Generator, strength: float, hue: float, p_gray: float) -> torch.Tensor:
    """x <- clip(b x), then clip((x - mean_gray) c + mean_gray), then clip((x - gray) s + gray), with b, c, s ~
    U(1 - strength, 1 + strength) per image, gray = 0.299 R + 0.587 G + 0.114 B; then a hue rotation by
    theta ~ U(-2 pi hue, 2 pi hue); finally x <- gray with probability ``p_gray``."""
    n = len(x)

    def factor() -> torch.Tensor:
        return _uniform(g, n, 1 - strength, 1 + strength).to(x.device, x.dtype).view(n, 1, 1, 1)

    weights = torch.tensor([0.299, 0.587, 0.114], device=x.device, dtype=x.dtype).view(1, 3, 1, 1)
    x = (x * factor()).clamp(0, 1)
    mean = (x * weights).sum(1, keepdim=True).mean((2, 3), keepdim=True)
    x = ((x - mean) * factor() + mean).clamp(0, 1)
    gray = (x * weights).sum(1, keepdim=True)
    x = ((x - gray) * factor() + gray).clamp(0, 1)
    x = hue_rotate(x, (2 * math.pi * hue * (2 * torch.rand(n, generator=g) - 1)).to(x.device, x.dtype))
    to_gray = (torch.rand(n, generator=g) < p_gray).to(x.device).view(n, 1, 1, 1)
    return torch.where(to_gray, (x * weights).sum(1, keepdim=True).expand_as(x), x)


def augment(x: torch.Tensor, g: torch.Generator, min_scale: float, jitter: float, hue: float,
            p_gray: float, flip: bool) -> torch.Tensor:
    """One random view t(x) = jitter(crop_flip(x)) per image of the batch."""
    return colour_jitter(resized_crop_flip(x, g, min_scale, flip), g, jitter, hue, p_gray)
