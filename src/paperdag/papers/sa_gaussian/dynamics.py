"""Vectorised constant-stepsize SA to stationarity: n independent chains x_{k+1} = x_k - alpha (g(x_k) + w_k).

Burn-in from the contraction rate mu: the initial offset decays like exp(-alpha mu k), so T = ceil(nats / (alpha mu))
steps leave exp(-nats) of it. For the quartic field (no strong convexity) the local rate at the steady-state scale
x ~ alpha^(1/4) is mu_eff = f''-average = 3 E[x^2] = 3 sqrt(alpha) sigma m2 with m2 = E[y^2] under the Gibbs law
(gibbs.py), so T = nats / (3 m2 sigma alpha^(3/2)). The centred-scaled state is y = (x - x*) / alpha^(1/2)
(alpha^(1/4) for the quartic field). Torch on ``device`` (GPU when the stage gets one): the state is float64,
the noise is drawn in float32 (uniforms and normals; four times cheaper on a CPU) and cast.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from .gibbs import gibbs_second_moment
from .problems import Problem

F64, F32 = torch.float64, torch.float32


def drift(pr: Problem, x: Tensor) -> Tensor:
    """g(x) of the problem's mean field for a batch x (n x d)."""
    c = pr.coef
    if pr.drift == "quadratic":
        return c["a"] * x
    if pr.drift == "logcosh":
        return c["a"] * x + c["b"] * torch.tanh(x - c["c"])
    if pr.drift == "linear":
        A, b = (torch.tensor(c[k], dtype=F64, device=x.device) for k in ("A", "b"))
        return x @ A.T - b
    if pr.drift == "nonlinear":
        R, off = (torch.tensor(c[k], dtype=F64, device=x.device) for k in ("R", "c"))
        return c["kappa"] * (x - c["gamma"] * torch.tanh(x) @ R.T - off)
    if pr.drift == "quartic":
        return x**3
    raise ValueError(f"unknown drift {pr.drift!r}")


class Noise:
    """Sampler of w_k for n chains: Gaussian L z, skewed L (e - 1), Rademacher +-sigma, or Markovian phi(s_k)."""

    def __init__(self, pr: Problem, n: int, gen: torch.Generator, device: str) -> None:
        self.pr, self.n, self.gen, self.device = pr, n, gen, device
        c = pr.coef
        self.L = torch.tensor(c["L"] if "L" in c else [[c["sigma"]]], dtype=F64, device=device)
        if pr.noise == "markov":
            self.cum = torch.tensor(c["P"], dtype=F64, device=device).cumsum(1)
            self.cum[:, -1] = 1.0
            self.phi = torch.tensor(c["phi"], dtype=F64, device=device)
            pi = torch.tensor(c["pi"], dtype=F64, device=device)
            self.state = torch.multinomial(pi, n, replacement=True, generator=gen)  # start in the stationary law

    def __call__(self) -> Tensor:
        """One draw w (n x d); a Markov chain advances one step after emitting phi(s_k)."""
        d, n, g = self.pr.dim, self.n, self.gen
        if self.pr.noise == "gaussian":
            return self._mix(torch.randn(n, d, dtype=F32, device=self.device, generator=g).to(F64))
        if self.pr.noise == "skewed":  # e = -log(1 - U) ~ Exp(1)
            u = torch.rand(n, d, dtype=F32, device=self.device, generator=g).to(F64)
            return self._mix(-torch.log1p(-u) - 1.0)
        if self.pr.noise == "rademacher":
            u = torch.rand(n, d, dtype=F32, device=self.device, generator=g)
            return torch.where(u < 0.5, -self.pr.coef["sigma"], self.pr.coef["sigma"]).to(F64)
        if self.pr.noise == "markov":
            w = self.phi[self.state]
            u = torch.rand(n, 1, dtype=F32, device=self.device, generator=g).to(F64)
            self.state = (u > self.cum[self.state]).sum(1)
            return w
        raise ValueError(f"unknown noise {self.pr.noise!r}")

    def _mix(self, z: Tensor) -> Tensor:
        """L z (z has identity covariance, so L z has covariance L L^T = Gamma); a product in 1-D."""
        return z * self.L[0, 0] if self.pr.dim == 1 else z @ self.L.T


def scale_exponent(pr: Problem) -> float:
    """y = (x - x*) / alpha^e: e = 1/4 for the quartic field, 1/2 otherwise."""
    return 0.25 if pr.drift == "quartic" else 0.5


def burn_in(pr: Problem, alpha: float, nats: float) -> int:
    """T = ceil(nats / (alpha mu)), with mu = 3 m2 sigma sqrt(alpha) for the quartic field."""
    mu = pr.mu if pr.drift != "quartic" else 3 * gibbs_second_moment(pr.coef["sigma"]) * math.sqrt(alpha)
    return math.ceil(nats / (alpha * mu))


@dataclass(frozen=True)
class SteadyState:
    """y at step T (n x d), E|y|^2 at steps 3T/4 and T (the stationarity check) and T."""

    y: Tensor
    m2_three_quarters: float
    m2_end: float
    steps: int


def simulate(pr: Problem, alpha: float, n: int, nats: float, offset: float, gen: torch.Generator,
             device: str) -> SteadyState:
    """Run n chains from x_0 = x* + offset (1, ..., 1) for T = burn_in(...) steps; return the scaled states."""
    x_star = torch.tensor(pr.x_star, dtype=F64, device=device)
    x = x_star + offset * torch.ones(n, pr.dim, dtype=F64, device=device)
    noise, steps = Noise(pr, n, gen, device), burn_in(pr, alpha, nats)
    scale = alpha ** scale_exponent(pr)
    m2_q = float("nan")
    for k in range(steps):
        x = x - alpha * (drift(pr, x) + noise())
        if k + 1 == (3 * steps) // 4:
            m2_q = float((((x - x_star) / scale) ** 2).sum(1).mean())
    y = (x - x_star) / scale
    return SteadyState(y=y, m2_three_quarters=m2_q, m2_end=float((y**2).sum(1).mean()), steps=steps)
