"""Image-quality measures of the colour budget, per image, in torch (batched).

PSNR(x, x') = 10 log10(1 / MSE(x, x')) for data range 1. SSIM (Wang et al. 2004) as scikit-image computes it by
default: over 7 x 7 uniform windows, per channel, SSIM = (2 mu_x mu_y + C1)(2 s_xy + C2) /
((mu_x^2 + mu_y^2 + C1)(s_x^2 + s_y^2 + C2)) with C1 = (0.01)^2, C2 = (0.03)^2, sample (co)variances (N / (N - 1)),
averaged over the windows that lie inside the image and over channels.
"""

from __future__ import annotations

import torch
from torch.nn import functional as F

WIN = 7
C1, C2 = 0.01**2, 0.03**2


def psnr(x: torch.Tensor, x_new: torch.Tensor) -> torch.Tensor:
    """Per-image PSNR in dB; +inf where the images are equal."""
    mse = ((x_new - x) ** 2).flatten(1).mean(1)
    return 10 * torch.log10(1.0 / mse)


def ssim(x: torch.Tensor, x_new: torch.Tensor) -> torch.Tensor:
    """Per-image mean SSIM of [N, C, H, W] images in [0, 1] (scikit-image's defaults, data_range = 1)."""
    def box(t: torch.Tensor) -> torch.Tensor:
        return F.avg_pool2d(t, WIN, stride=1)

    cov = WIN * WIN / (WIN * WIN - 1)
    mx, my = box(x), box(x_new)
    vx, vy = cov * (box(x * x) - mx * mx), cov * (box(x_new * x_new) - my * my)
    vxy = cov * (box(x * x_new) - mx * my)
    s = ((2 * mx * my + C1) * (2 * vxy + C2)) / ((mx * mx + my * my + C1) * (vx + vy + C2))
    return s.flatten(1).mean(1)
