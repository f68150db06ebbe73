"""Exact budget checks on every perturbed image (no sampling).

L_inf schemes: max_i ||x'_i - x_i||_inf <= eps (+ float tolerance). OPS: at most one pixel (all channels) changed
per image. Colour: the stored colour part is the class-wise offset it claims to be, max_i ||x_c,i - clip(x_i +
c_{y_i})||_inf <= tol for the stored offsets c [K, 3] (one RGB offset per class, nothing per image), and
PSNR(x, x_c) >= psnr_min and SSIM(x, x_c) >= ssim_min for every image. DUNE: its colour part passes the colour
checks and ||x' - x_c||_inf <= eps.
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
          psnr_min: float, ssim_min: float, offsets: torch.Tensor | None = None,
          y: torch.Tensor | None = None) -> dict[str, float]:
    """Worst-case budget numbers over every image, and ``ok`` (1.0 when all images are within budget); a colour
    part needs its ``offsets`` [K, 3] and the labels ``y`` (without them it is rejected)."""
    if scheme == "clean":
        return {"ok": float(torch.equal(x, x_new)), "images": float(len(x))}
    if scheme == "ops":
        worst = int(changed_pixels(x, x_new).max())
        return {"ok": float(worst <= 1), "max_changed_pixels": float(worst), "images": float(len(x))}
    out: dict[str, float] = {"images": float(len(x))}
    ok = True
    if scheme in ("colour", "dune") and x_colour is None:
        return out | {"ok": 0.0}
    if x_colour is not None:
        classwise = offsets is not None and y is not None and offsets.dim() == 2 and offsets.shape[1] == x.shape[1]
        if not classwise:
            return out | {"ok": 0.0}
        claimed = (x + offsets[y][:, :, None, None]).clamp(0.0, 1.0)
        out["max_colour_residual"] = float(linf(claimed, x_colour).max())
        out["min_psnr"], out["min_ssim"] = float(psnr(x, x_colour).min()), float(ssim(x, x_colour).min())
        ok = (out["max_colour_residual"] <= TOL and out["min_psnr"] >= psnr_min - TOL
              and out["min_ssim"] >= ssim_min - TOL)
    if scheme != "colour":
        base = x_colour if x_colour is not None else x
        out["max_linf"] = float(linf(base, x_new).max())
        ok = ok and out["max_linf"] <= eps + TOL
    return out | {"ok": float(ok)}
