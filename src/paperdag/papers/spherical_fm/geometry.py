"""The hypersphere S_R = {x : ||x|| = R} of radius R as a Riemannian manifold (batched torch, rows are points).

For x0, x1 on S_R with angle theta = arccos(<x0, x1> / R^2) the geodesic (slerp) is
    x_t = [sin((1 - t) theta) x0 + sin(t theta) x1] / sin(theta),
with velocity  dx_t/dt = theta [cos(t theta) x1 - cos((1 - t) theta) x0] / sin(theta),  tangent: <x_t, dx_t/dt> = 0.
The tangent projection is P_x v = v - (<v, x> / R^2) x and the exponential map, for a tangent v,
    exp_x(v) = cos(||v|| / R) x + R sin(||v|| / R) v / ||v||.
"""

from __future__ import annotations

import torch

EPS = 1e-7


def project_to_sphere(x: torch.Tensor, radius: float) -> torch.Tensor:
    """Radial projection x -> R x / ||x|| of each row."""
    return radius * x / x.norm(dim=-1, keepdim=True).clamp_min(EPS)


def angle(x0: torch.Tensor, x1: torch.Tensor) -> torch.Tensor:
    """theta = arccos(<x0, x1> / (||x0|| ||x1||)) per row, in [0, pi]."""
    cos = (x0 * x1).sum(-1) / (x0.norm(dim=-1) * x1.norm(dim=-1)).clamp_min(EPS)
    return torch.arccos(cos.clamp(-1 + EPS, 1 - EPS))


def slerp(x0: torch.Tensor, x1: torch.Tensor, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(x_t, dx_t/dt) of the geodesic from x0 to x1 (rows on one sphere) at times t (x0's leading shape); see the
    module."""
    theta = angle(x0, x1)[..., None]
    t = t[..., None]
    s = torch.sin(theta)
    x_t = (torch.sin((1 - t) * theta) * x0 + torch.sin(t * theta) * x1) / s
    v_t = theta * (torch.cos(t * theta) * x1 - torch.cos((1 - t) * theta) * x0) / s
    return x_t, v_t


def tangent(x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """P_x v = v - (<v, x> / ||x||^2) x: the component of v orthogonal to the position x."""
    return v - ((v * x).sum(-1, keepdim=True) / (x * x).sum(-1, keepdim=True)) * x


def exp_map(x: torch.Tensor, v: torch.Tensor, radius: float) -> torch.Tensor:
    """exp_x(v) = cos(||v|| / R) x + R sin(||v|| / R) v / ||v|| for tangent v at x on S_R."""
    norm = v.norm(dim=-1, keepdim=True)
    a = norm / radius
    return torch.cos(a) * x + radius * torch.sin(a) * v / norm.clamp_min(EPS)
