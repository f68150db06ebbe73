"""The unlearnable-example baselines, all under the same L_inf budget eps except OPS (one pixel per image).

- random: delta_i ~ U[-eps, eps]^d per image (the null baseline).
- synthetic (Yu et al. 2022, KDD, "Availability attacks create shortcuts"): class-wise Gaussian-mixture noise on
  a coarse grid of g x g = ceil(H / p)^2 cells, u_i = mu_{y_i} + sigma z_i in R^{3 g g}, mu_k in {-1, +1}^{3 g g} a
  random hypercube vertex (their make_classification with class_sep 10, sigma = 1/10 relative), each cell
  duplicated over a p x p patch and the image scaled to the L2 norm eps sqrt(d) of the L_inf ball's corners, as
  they do; then clipped to [-eps, eps] so that it shares the L_inf budget: linearly separable by construction.
- OPS (Wu et al. 2023, ICLR, "One-pixel shortcut"): per class k, the pixel p and corner colour v in {0,1}^3 that
  maximise mean_i ||x_i(p) - v||_1 / (std_i ||x_i(p) - v||_1 + 1e-3) over class k; every image of k gets x(p) = v.
- adversarial poisoning (Fowl et al. 2021, NeurIPS, "Adversarial examples make strong poisons"): class-targeted
  PGD toward the permuted label (y + 1) mod K against one clean-trained model (their headline variant):
  delta_i = argmin_{||delta||_inf <= eps} CE(f(x_i + delta), (y_i + 1) mod K).
- EM (Huang et al. 2021, ICLR, "Unlearnable examples"): sample-wise error-minimising noise by the min-min bi-level
  min_theta sum_i min_{||delta_i||_inf <= eps} CE(f_theta(x_i + delta_i), y_i), alternating ``train_steps``
  mini-batches of theta with PGD on every delta_i, until the model's accuracy on x + delta reaches ``stop_acc``.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .attacks import ensemble_loss, pgd, project
from .network import accuracy


def random_noise(x: torch.Tensor, eps: float, generator: torch.Generator) -> torch.Tensor:
    """clip(x + U[-eps, eps])."""
    u = torch.rand(x.shape, generator=generator).to(x.device)
    return (x + eps * (2 * u - 1)).clamp(0.0, 1.0)


def synthetic_noise(x: torch.Tensor, y: torch.Tensor, classes: int, eps: float, patch: int, spread: float,
                    generator: torch.Generator) -> torch.Tensor:
    """clip(x + delta_i), delta_i = clip(eps sqrt(d) U_i / ||U_i||_2, -eps, eps), U_i = the cells of
    u_i = mu_{y_i} + spread z_i each duplicated over a p x p patch (cropped to H x W)."""
    n, c, h, w = x.shape
    g = -(-max(h, w) // patch)
    mu = 2.0 * torch.randint(0, 2, (classes, c, g, g), generator=generator) - 1.0
    u = (mu[y.cpu()] + spread * torch.randn(n, c, g, g, generator=generator)).to(x.device, x.dtype)
    big = u.repeat_interleave(patch, 2).repeat_interleave(patch, 3)[:, :, :h, :w]
    delta = eps * (c * h * w) ** 0.5 * big / big.flatten(1).norm(dim=1)[:, None, None, None]
    return (x + delta.clamp(-eps, eps)).clamp(0.0, 1.0)


def adversarial_poison(model: nn.Module, x: torch.Tensor, y: torch.Tensor, classes: int, eps: float, steps: int,
                       batch: int, generator: torch.Generator) -> torch.Tensor:
    """x + delta, delta by PGD descent on CE(f(x + delta), (y + 1) mod K) (step 2.5 eps / steps), in batches."""
    target = (y + 1) % classes
    return torch.cat([pgd([model], x[i:i + batch], target[i:i + batch], eps, 2.5 * eps / steps, steps,
                          minimise=True, generator=generator) for i in range(0, len(x), batch)])


def ops_pixels(x: torch.Tensor, y: torch.Tensor, classes: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Per class: the flat pixel index [K] and colour [K, 3] maximising the OPS criterion (exhaustive search)."""
    corners = torch.tensor([[(v >> b) & 1 for b in range(3)] for v in range(8)], dtype=x.dtype, device=x.device)
    pixels = torch.zeros(classes, dtype=torch.long, device=x.device)
    colours = torch.zeros(classes, 3, dtype=x.dtype, device=x.device)
    for k in range(classes):
        xk = x[y == k].flatten(2)  # [n, 3, HW]
        dist = (xk[:, None] - corners[None, :, :, None]).abs().sum(2)  # [n, 8, HW]
        score = dist.mean(0) / (dist.std(0) + 1e-3)
        best = int(score.flatten().argmax())
        colours[k], pixels[k] = corners[best // score.shape[1]], best % score.shape[1]
    return pixels, colours


def one_pixel_shortcut(x: torch.Tensor, y: torch.Tensor, pixels: torch.Tensor, colours: torch.Tensor) -> torch.Tensor:
    """x with pixel p_{y_i} of image i set to colour v_{y_i}."""
    flat = x.flatten(2).clone()
    flat[torch.arange(len(x)), :, pixels[y]] = colours[y]
    return flat.view_as(x)


def error_minimising_noise(model: nn.Module, x: torch.Tensor, y: torch.Tensor, eps: float, rounds: int,
                           train_steps: int, pgd_steps: int, batch: int, lr: float, stop_acc: float,
                           generator: torch.Generator) -> tuple[torch.Tensor, int]:
    """The min-min alternation; returns (x + delta, rounds used)."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    x_adv = x.clone()
    for r in range(1, rounds + 1):
        model.train()
        for _ in range(train_steps):
            idx = torch.randint(len(x), (batch,), generator=generator).to(x.device)
            opt.zero_grad()
            F.cross_entropy(model(x_adv[idx]), y[idx]).backward()
            opt.step()
        model.eval()
        x_adv = torch.cat([_em_step(model, x[i:i + 512], x_adv[i:i + 512], y[i:i + 512], eps, pgd_steps)
                           for i in range(0, len(x), 512)])
        if accuracy(model, x_adv, y) >= stop_acc:
            return x_adv, r
    return x_adv, rounds


def _em_step(model: nn.Module, x: torch.Tensor, x_adv: torch.Tensor, y: torch.Tensor, eps: float,
             steps: int) -> torch.Tensor:
    """PGD descent on CE(f(x + delta), y) from the current delta (warm start), projected to the eps ball."""
    for _ in range(steps):
        x_adv.requires_grad_(True)
        grad, = torch.autograd.grad(ensemble_loss([model], x_adv, y), x_adv)
        x_adv = project(x_adv.detach() - (eps / 5) * grad.sign(), x, eps)
    return x_adv.detach()
