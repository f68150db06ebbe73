"""Muon and NorMuon as ``torch.optim.Optimizer`` subclasses (usable outside paperdag) for 2-D weight matrices.

Muon (Jordan et al., 2024) for a matrix W of shape (m, n) with gradient G:
    B <- mu B + (1 - mu) G                         (momentum, mu = 0.95)
    U  = mu B + (1 - mu) G  if nesterov else B      (Nesterov look-ahead)
    O  = NS5(U) ~ U_s V_s^T                         (orthogonalization, U = U_s S V_s^T)
    W <- W (1 - lr wd) - lr sqrt(max(1, m/n)) O     (decoupled weight decay, shape scaling)
NorMuon (this paper) inserts a neuron-wise (row-wise) normalisation between O and the shape scaling:
    v <- b2 v + (1 - b2) mean_cols(O * O)           (one second moment per output neuron, b2 = 0.95, no bias corr.)
    O' = O / (sqrt(v) + eps),   O' <- O' ||O||_F / ||O'||_F
Rescaling to ||O||_F (the brief's variant) keeps Muon's update magnitude, so Muon's learning rate carries over;
the paper instead rescales to an AdamW-matched RMS of 0.2 sqrt(mn). Embeddings, head, norms and biases are not
handled here: pair these optimizers with ``torch.optim.AdamW`` for them.

Numerics: the Newton-Schulz iteration runs in bfloat16 on CUDA (as in the reference implementations) and in
float32 on the CPU, where bfloat16 matmuls are slow and would only add rounding noise to small matrices.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import torch
from torch import Tensor

NS_COEFFS = (3.4445, -4.7750, 2.0315)


def newton_schulz5(g: Tensor, steps: int = 5, eps: float = 1e-7) -> Tensor:
    """Approximate the orthogonal factor U V^T of G = U S V^T with the quintic Newton-Schulz iteration.

    X_0 = G / (||G||_F + eps) (transposed first when rows > cols, so X X^T is the smaller Gram matrix), then
    ``steps`` times: A = X X^T, X <- a X + (b A + c A^2) X with (a, b, c) = (3.4445, -4.7750, 2.0315).
    The coefficients trade exactness for speed: singular values land roughly in [0.7, 1.2], not exactly at 1.
    """
    a, b, c = NS_COEFFS
    x = g.to(torch.bfloat16 if g.is_cuda else torch.float32)
    transposed = g.size(-2) > g.size(-1)
    if transposed:
        x = x.mT
    x = x / (x.norm(dim=(-2, -1), keepdim=True) + eps)
    for _ in range(steps):
        gram = x @ x.mT
        x = a * x + (b * gram + c * gram @ gram) @ x
    if transposed:
        x = x.mT
    return x.to(g.dtype)


def shape_scale(p: Tensor) -> float:
    """Muon's aspect-ratio factor sqrt(max(1, rows / cols))."""
    return math.sqrt(max(1.0, p.size(-2) / p.size(-1)))


def row_normalize(o: Tensor, v: Tensor, beta2: float, eps: float) -> Tensor:
    """NorMuon's neuron-wise step, updating ``v`` in place:
    v <- beta2 v + (1 - beta2) mean_cols(O^2);  O' = O / (sqrt(v) + eps);  return O' ||O||_F / ||O'||_F.
    """
    v.lerp_(o.square().mean(dim=-1), 1 - beta2)
    normed = o / (v.sqrt().unsqueeze(-1) + eps)
    return normed * (o.norm() / normed.norm().clamp_min(1e-30))


class Muon(torch.optim.Optimizer):
    """MomentUm Orthogonalized by Newton-Schulz, for 2-D parameters only (see the module docstring)."""

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict],
        lr: float = 0.02,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_steps: int = 5,
        weight_decay: float = 0.0,
        **extra: float,
    ):
        defaults = {"lr": lr, "momentum": momentum, "nesterov": nesterov, "ns_steps": ns_steps,
                    "weight_decay": weight_decay}  # fmt: skip
        super().__init__(params, defaults | extra)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"{type(self).__name__} takes 2-D parameters only, got shape {tuple(p.shape)}")

    def direction(self, p: Tensor, group: dict) -> Tensor:
        """The step direction D (W <- W (1 - lr wd) - lr D): momentum, Nesterov, NS5, ``postprocess``, shape scale."""
        state = self.state[p]
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = torch.zeros_like(p)
        buf = state["momentum_buffer"]
        buf.lerp_(p.grad, 1 - group["momentum"])
        u = p.grad.lerp(buf, group["momentum"]) if group["nesterov"] else buf
        o = newton_schulz5(u, steps=group["ns_steps"]).float()
        return (self.postprocess(o, state, group) * shape_scale(p)).to(p.dtype)

    def postprocess(self, o: Tensor, state: dict, group: dict) -> Tensor:
        """Hook between orthogonalization and shape scaling; Muon leaves O unchanged."""
        return o

    @staticmethod
    def apply(p: Tensor, d: Tensor, group: dict) -> None:
        """W <- W (1 - lr wd) - lr D (decoupled weight decay)."""
        p.mul_(1 - group["lr"] * group["weight_decay"])
        p.add_(d, alpha=-group["lr"])

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:
        """One update of every parameter with a gradient: W <- W (1 - lr wd) - lr ``direction``."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    self.apply(p, self.direction(p, group), group)
        return loss


class NorMuon(Muon):
    """Muon followed by neuron-wise second-moment normalisation of the orthogonalized update (see module doc)."""

    def __init__(
        self,
        params: Iterable[Tensor] | Iterable[dict],
        lr: float = 0.02,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_steps: int = 5,
        weight_decay: float = 0.0,
        beta2: float = 0.95,
        eps: float = 1e-8,
    ):
        super().__init__(params, lr, momentum, nesterov, ns_steps, weight_decay, beta2=beta2, eps=eps)

    def postprocess(self, o: Tensor, state: dict, group: dict) -> Tensor:
        if "second_moment" not in state:
            state["second_moment"] = torch.zeros(o.size(0), dtype=torch.float32, device=o.device)
        return row_normalize(o, state["second_moment"], group["beta2"], group["eps"])


def state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes held in the optimizer's per-parameter state tensors (momentum, second moments, ...)."""
    return sum(
        t.numel() * t.element_size() for s in optimizer.state.values() for t in s.values() if isinstance(t, Tensor)
    )
