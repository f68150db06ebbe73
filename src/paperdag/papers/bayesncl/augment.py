"""SimCLR-style augmentations, batched in torch (no torchvision): random resized crop, horizontal flip, colour
jitter (brightness, contrast, saturation, hue) and random grayscale, every draw taken from one ``torch.Generator``
(reproducible on any device)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F


CROP_DRAWS = ("scale", "ratio", "tx", "ty", "coin")  # U(0, 1) draws of a crop, in their order
JITTER_DRAWS = ("bright", "contrast", "sat", "hue", "gray")  # U(0, 1) draws of the colour jitter, in their order


def _raw(g: torch.Generator, n: int, names: tuple[str, ...]) -> dict[str, torch.Tensor]:
    """One U(0, 1) vector of ``n`` per name from ``g``, in the names' order (the only draws an augmentation takes; the
    arithmetic on them runs in the *_apply functions, on the images' device)."""
    return {name: torch.rand(n, generator=g) for name in names}


def _between(u: torch.Tensor, lo: float, hi: float) -> torch.Tensor:
    return lo + (hi - lo) * u


def crop_draws(g: torch.Generator, n: int) -> dict[str, torch.Tensor]:
    """The U(0, 1) draws of ``n`` random resized crops (with flips) from ``g``."""
    return _raw(g, n, CROP_DRAWS)


def crop_apply(x: torch.Tensor, d: dict[str, torch.Tensor], min_scale: float, flip: bool) -> torch.Tensor:
    """Random resized crops from the draws ``d``: crop area fraction s ~ U(min_scale, 1), aspect ratio r with
    log r ~ U(log 3/4, log 4/3), centre uniform where the crop fits, resized back to the input size by bilinear
    sampling (``affine_grid`` with theta = [[f w, 0, t_x], [0, h, t_y]], w = sqrt(s r), h = sqrt(s / r), each at
    most 1; with ``flip``, f = -1 or 1 with probability 1/2, else f = 1: the flip coin is drawn either way, so the
    other draws do not depend on ``flip``)."""
    s, log_r = _between(d["scale"], min_scale, 1.0), _between(d["ratio"], math.log(3 / 4), math.log(4 / 3))
    w, h = (s * log_r.exp()).sqrt().clamp(max=1.0), (s / log_r.exp()).sqrt().clamp(max=1.0)
    tx, ty = (1 - w) * (2 * d["tx"] - 1), (1 - h) * (2 * d["ty"] - 1)
    sign = torch.where(d["coin"] < 0.5, -1.0, 1.0) if flip else torch.ones_like(w)
    theta = torch.zeros(len(w), 2, 3, device=w.device, dtype=w.dtype)
    theta[:, 0, 0], theta[:, 0, 2], theta[:, 1, 1], theta[:, 1, 2] = sign * w, tx, h, ty
    grid = F.affine_grid(theta.to(x.device, x.dtype), list(x.shape), align_corners=False)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="reflection", align_corners=False)


def resized_crop_flip(x: torch.Tensor, g: torch.Generator, min_scale: float, flip: bool) -> torch.Tensor:
    """A random resized crop (with flip) of every image: crop_apply(x, crop_draws(g, len(x)), min_scale, flip)."""
    return crop_apply(x, crop_draws(g, len(x)), min_scale, flip)


def hue_rotate(x: torch.Tensor, angle: torch.Tensor) -> torch.Tensor:
    """x <- clip(R(theta) x): rotation of every RGB pixel by ``angle`` theta (one per image) about the grey axis
    u = (1, 1, 1) / sqrt 3 (Rodrigues: R = cos theta I + sin theta [u]_x + (1 - cos theta) u u^T), a hue shift
    that keeps the grey component."""
    u = torch.full((3,), 3 ** -0.5, device=x.device, dtype=x.dtype)
    cross = torch.tensor([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]], device=x.device, dtype=x.dtype)
    cos, sin = angle.cos().view(-1, 1, 1), angle.sin().view(-1, 1, 1)
    rot = cos * torch.eye(3, device=x.device, dtype=x.dtype) + sin * cross * 3 ** -0.5 + (1 - cos) * torch.outer(u, u)
    return torch.einsum("nij,njhw->nihw", rot, x).clamp(0, 1)


def jitter_draws(g: torch.Generator, n: int) -> dict[str, torch.Tensor]:
    """The U(0, 1) draws of ``n`` colour jitters from ``g``."""
    return _raw(g, n, JITTER_DRAWS)


def jitter_apply(x: torch.Tensor, d: dict[str, torch.Tensor], strength: float, hue: float,
                 p_gray: float) -> torch.Tensor:
    """x <- clip(b x), then clip((x - mean_gray) c + mean_gray), then clip((x - gray) s + gray), with b, c, s ~
    U(1 - strength, 1 + strength) per image, gray = 0.299 R + 0.587 G + 0.114 B (mean_gray its image mean); then a
    hue rotation by theta ~ U(-2 pi hue, 2 pi hue); finally x <- gray with probability ``p_gray`` (from the draws
    ``d``)."""
    n = len(x)

    def factor(name: str) -> torch.Tensor:
        return _between(d[name], 1 - strength, 1 + strength).to(x.device, x.dtype).view(n, 1, 1, 1)

    weights = torch.tensor([0.299, 0.587, 0.114], device=x.device, dtype=x.dtype).view(1, 3, 1, 1)
    x = (x * factor("bright")).clamp(0, 1)
    mean = (x * weights).sum(1, keepdim=True).mean((2, 3), keepdim=True)
    x = ((x - mean) * factor("contrast") + mean).clamp(0, 1)
    gray = (x * weights).sum(1, keepdim=True)
    x = ((x - gray) * factor("sat") + gray).clamp(0, 1)
    x = hue_rotate(x, (2 * math.pi * hue * (2 * d["hue"] - 1)).to(x.device, x.dtype))
    to_gray = (d["gray"] < p_gray).to(x.device).view(n, 1, 1, 1)
    return torch.where(to_gray, (x * weights).sum(1, keepdim=True).expand_as(x), x)


def colour_jitter(x: torch.Tensor, g: torch.Generator, strength: float, hue: float, p_gray: float) -> torch.Tensor:
    """jitter_apply(x, jitter_draws(g, len(x)), strength, hue, p_gray)."""
    return jitter_apply(x, jitter_draws(g, len(x)), strength, hue, p_gray)


def draws(g: torch.Generator, n: int) -> dict[str, torch.Tensor]:
    """Every draw of ``n`` views from ``g``: the crops', then the colour jitter's (the order of ``augment``)."""
    return crop_draws(g, n) | jitter_draws(g, n)


def apply(x: torch.Tensor, d: dict[str, torch.Tensor], min_scale: float, jitter: float, hue: float, p_gray: float,
          flip: bool) -> torch.Tensor:
    """t(x) = jitter(crop_flip(x)) with the draws ``d``, per image: so the views of several generators can be drawn
    one generator at a time and applied in one batch (``cat_draws``)."""
    return jitter_apply(crop_apply(x, d, min_scale, flip), d, jitter, hue, p_gray)


def cat_draws(ds: list[dict[str, torch.Tensor]], device: torch.device | str = "cpu") -> dict[str, torch.Tensor]:
    """The draws of several batches concatenated in order (rows as in torch.cat of their images), on ``device``."""
    return {k: torch.cat([d[k] for d in ds]).to(device) for k in ds[0]}


def augment(x: torch.Tensor, g: torch.Generator, min_scale: float, jitter: float, hue: float,
            p_gray: float, flip: bool) -> torch.Tensor:
    """One random view t(x) = jitter(crop_flip(x)) per image of the batch."""
    return apply(x, draws(g, len(x)), min_scale, jitter, hue, p_gray, flip)
