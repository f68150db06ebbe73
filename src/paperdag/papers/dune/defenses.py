"""The defenses a victim trainer applies to its inputs (training and test images alike, as part of its model).

- none: g(x) = x.
- jpeg: JPEG compression at quality q (Pillow's encoder; the ISS paper's JPEG-10 squeezer).
- grayscale: luma Y = 0.299 R + 0.587 G + 0.114 B copied to the three channels (ISS's grayscale squeezer).
- noise_blur: clip(x + N(0, sigma_n^2)) then a Gaussian blur of width sigma_b (scipy.ndimage) per channel.
- adv_train: g(x) = x, but the victim trains by PGD adversarial training (network.train_classifier).
- iss: image shortcut squeezing (Liu, Zhao & Larson 2023, ICML): grayscale then JPEG, composing the squeezers
  aimed at colour / low-frequency and at high-frequency shortcuts.
"""

from __future__ import annotations

import io

import numpy as np
import torch
from PIL import Image
from scipy.ndimage import gaussian_filter

DEFENSES = ("none", "jpeg", "grayscale", "noise_blur", "adv_train", "iss")
LUMA = (0.299, 0.587, 0.114)


def jpeg(x: torch.Tensor, quality: int) -> torch.Tensor:
    """Encode and decode every image as 8-bit JPEG at ``quality``."""
    arrays = (x.permute(0, 2, 3, 1).cpu().numpy() * 255).round().astype(np.uint8)
    out = []
    for a in arrays:
        buf = io.BytesIO()
        Image.fromarray(a).save(buf, format="JPEG", quality=quality)
        out.append(np.asarray(Image.open(buf).convert("RGB")))
    return torch.as_tensor(np.stack(out), dtype=x.dtype).permute(0, 3, 1, 2).to(x.device) / 255.0


def grayscale(x: torch.Tensor) -> torch.Tensor:
    """Y = 0.299 R + 0.587 G + 0.114 B on every channel."""
    luma = torch.tensor(LUMA, dtype=x.dtype, device=x.device)
    return (x * luma[None, :, None, None]).sum(1, keepdim=True).expand_as(x).contiguous()


def noise_blur(x: torch.Tensor, noise: float, blur: float, rng: np.random.Generator) -> torch.Tensor:
    """Gaussian blur (sigma_b) of clip(x + N(0, sigma_n^2))."""
    noisy = np.clip(x.cpu().numpy() + rng.normal(0.0, noise, x.shape), 0.0, 1.0)
    return torch.as_tensor(gaussian_filter(noisy, sigma=(0, 0, blur, blur)), dtype=x.dtype).to(x.device)


def apply_defense(name: str, x: torch.Tensor, quality: int, noise: float, blur: float,
                  rng: np.random.Generator) -> torch.Tensor:
    """g(x) for the defense ``name`` (adv_train acts in training, not on the inputs)."""
    if name in ("none", "adv_train"):
        return x
    if name == "jpeg":
        return jpeg(x, quality)
    if name == "grayscale":
        return grayscale(x)
    if name == "noise_blur":
        return noise_blur(x, noise, blur, rng)
    if name == "iss":
        return jpeg(grayscale(x), quality)
    raise ValueError(f"unknown defense {name!r}")
