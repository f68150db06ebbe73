"""Exact budget checks on every perturbed image (no sampling).

L_inf schemes: max_i ||x'_i - x_i||_inf <= eps (+ float tolerance). OPS: at most one pixel (all channels) changed
per image. Colour: PSNR(x, x_c) >= psnr_min and SSIM(x, x_c) >= ssim_min for every image, where x_c = clip(x + c_y).
DUNE: the colour part x_c meets the quality budget and ||x' - x_c||_inf <= eps.
"""

from __future__ import annotations

import torch

from .quality import psnr, ssim

TOL = 1e-6


def linf(x: torch.Tensor, x_new: torch.Tensor) -> torch.Tensor:
    """Per-image ||x' - x||_inf."""
    return (x_new - x).flatten(1).abs().max(1).values


def changed_pixels(x: torch.Tensor, x_new: torch.Tensor) -> torch.Tensor:
    """Per-image number of pixel positions where any channel differs."""
    return ((x_new - x).abs().amax(1) > 0).flatten(1).sum(1)


def check(scheme: str, x: torch.Tensor, x_new: torch.Tensor, x_colour: torch.Tensor | None, eps: float,
          psnr_min: float, ssim_min: float) -> dict[str, float]:
    """Worst-case budget numbers over every image, and ``ok`` (1.0 when all images are within budget)."""
    if scheme == "clean":
        return {"ok": float(torch.equal(x, x_new)), "images": float(len(x))}
    if scheme == "ops":
        worst = int(changed_pixels(x, x_new).max())
        return {"ok": float(worst <= 1), "max_changed_pixels": float(worst), "images": float(len(x))}
    out: dict[str, float] = {"images": float(len(x))}
    ok = True
    if x_colour is not None:
        out["min_psnr"], out["min_ssim"] = float(psnr(x, x_colour).min()), float(ssim(x, x_colour).min())
        ok = out["min_psnr"] >= psnr_min - TOL and out["min_ssim"] >= ssim_min - TOL
    if scheme != "colour":
        base = x_colour if x_colour is not None else x
        out["max_linf"] = float(linf(base, x_new).max())
        ok = ok and out["max_linf"] <= eps + TOL
    return out | {"ok": float(ok)}
