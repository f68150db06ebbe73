"""The four conditional flow-matching generators, one loss and one sampler each for the two geometries.

Euclidean (Lipman et al. 2023, ICLR; Tong et al. 2024, TMLR): x0 ~ N(0, I), straight paths
    x_t = (1 - t) x0 + t x1,  target u_t = x1 - x0,  loss E ||v(x_t, t) - u_t||^2,  Euler x <- x + h v(x, t).
Spherical (SFM, the paper): source and data projected to S_R, R the mean data norm; geodesic (slerp) paths and their
tangent velocity (geometry.py); loss E ||P_{x_t} v(x_t, t) - u_t||^2; sampling x <- exp_x(h P_x v(x, t)).
Pairs (x0, x1) are drawn independently (I-CFM) or re-paired by a minibatch OT permutation (coupling.py):
    I-CFM: Euclidean, independent   OT-CFM: Euclidean, squared-Euclidean OT
    SOT-CFM: Euclidean, angular OT  SFM: spherical, angular OT (the geodesic distance on S_R is R * angle)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from .coupling import ot_permutation
from .geometry import exp_map, project_to_sphere, slerp, tangent


@dataclass(frozen=True)
class FlowSpec:
    """A generator: its path geometry ("euclidean" | "sphere") and coupling ("independent" | an OT cost)."""

    geometry: str
    coupling: str


SPECS = {
    "icfm": FlowSpec("euclidean", "independent"),
    "otcfm": FlowSpec("euclidean", "euclidean"),
    "sotcfm": FlowSpec("euclidean", "angular"),
    "sfm": FlowSpec("sphere", "angular"),
}


def from_noise(z: torch.Tensor, spec: FlowSpec, radius: float) -> torch.Tensor:
    """The source point of noise z ~ N(0, I_dim): z itself, or its radial projection to S_R (uniform on the sphere)
    for the spherical geometry."""
    return project_to_sphere(z, radius) if spec.geometry == "sphere" else z


def source(n: int, dim: int, spec: FlowSpec, radius: float, gen: torch.Generator, device: str) -> torch.Tensor:
    """n source points x0 = from_noise(z) of fresh draws z ~ N(0, I_dim) from ``gen``."""
    return from_noise(torch.randn(n, dim, generator=gen, device=device), spec, radius)


EVAL_STREAM = 1_000_003  # offset of the evaluation noise's seed: apart from every training seed's stream


def eval_noise(n: int, dim: int, seed: int) -> torch.Tensor:
    """The evaluation noise: n rows z ~ N(0, I_dim) drawn on the CPU from seed + EVAL_STREAM alone (any device gets
    the same numbers). Every generator, training seed and budget samples from these z, and the fitted Gaussian maps the same z
    (common random numbers): FD's sampling noise from the draw is then shared, not added to seed-to-seed spread."""
    return torch.randn(n, dim, generator=torch.Generator().manual_seed(seed + EVAL_STREAM))


def pair(x0: torch.Tensor, x1: torch.Tensor, spec: FlowSpec) -> tuple[torch.Tensor, torch.Tensor]:
    """(x0, x1) with x0 re-ordered by the minibatch OT permutation of ``spec.coupling`` (kept as is if independent);
    rows [n, d], or one minibatch per seed [S, n, d] coupled separately."""
    if spec.coupling == "independent":
        return x0, x1
    if x0.dim() == 3:
        return torch.stack([pair(a, b, spec)[0] for a, b in zip(x0, x1, strict=True)]), x1
    return x0[ot_permutation(x0, x1, spec.coupling)], x1


def path(x0: torch.Tensor, x1: torch.Tensor, t: torch.Tensor, spec: FlowSpec) -> tuple[torch.Tensor, torch.Tensor]:
    """(x_t, u_t): the straight line and x1 - x0, or the slerp and its tangent velocity (t has x0's leading shape)."""
    if spec.geometry == "sphere":
        return slerp(x0, x1, t)
    return (1 - t[..., None]) * x0 + t[..., None] * x1, x1 - x0


def velocity(net: nn.Module, x: torch.Tensor, t: torch.Tensor, spec: FlowSpec) -> torch.Tensor:
    """v(x, t), projected to the tangent space P_x v on the sphere."""
    v = net(x, t)
    return tangent(x, v) if spec.geometry == "sphere" else v


def fm_loss(net: nn.Module, x0: torch.Tensor, x1: torch.Tensor, t: torch.Tensor, spec: FlowSpec) -> torch.Tensor:
    """Conditional flow-matching loss (1/n) sum_i ||v(x_t, t) - u_t||^2 / dim on coupled pairs: a scalar for rows
    [n, d], one loss per seed for stacked minibatches [S, n, d] (a seed-batched field, networks.SeedBatch)."""
    x0, x1 = pair(x0, x1, spec)
    x_t, u_t = path(x0, x1, t, spec)
    return ((velocity(net, x_t, t, spec) - u_t) ** 2).mean(dim=(-2, -1))


@torch.no_grad()
def sample(net: nn.Module, x0: torch.Tensor, steps: int, spec: FlowSpec, radius: float) -> torch.Tensor:
    """Integrate dx/dt = v(x, t) from t = 0 to 1 in ``steps`` uniform steps h = 1 / steps: Euler in R^d, or
    exponential-map Euler x <- exp_x(h P_x v) on S_R (re-projected to S_R against round-off)."""
    x, h = x0, 1.0 / steps
    for k in range(steps):
        t = torch.full(x.shape[:-1], k * h, device=x.device)
        v = velocity(net, x, t, spec)
        x = project_to_sphere(exp_map(x, h * v, radius), radius) if spec.geometry == "sphere" else x + h * v
    return x


def gaussian_baseline(data: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """The trivial generator every model must beat: N(mean, cov) fitted to the data rows, mapping each noise row z to
    x = mu + L z with L L^T = cov + 1e-6 I (Cholesky)."""
    mu = data.mean(0)
    cov = torch.cov(data.T.double()) + 1e-6 * torch.eye(data.shape[1], dtype=torch.float64, device=data.device)
    return (mu.double() + z.to(data.device, torch.float64) @ torch.linalg.cholesky(cov).T).to(data.dtype)
