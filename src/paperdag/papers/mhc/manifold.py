"""The manifold check of trained models: every residual mixing matrix H_res that a trained HC or mHC model
produces on the validation tokens, layer by layer, checked exactly (sinkhorn.check_doubly_stochastic)."""

from __future__ import annotations

import torch

from .model import StreamGPT
from .sinkhorn import ManifoldCheck, check_doubly_stochastic

Batches = list[tuple[torch.Tensor, torch.Tensor]]


@torch.no_grad()
def layer_checks(model: StreamGPT, batches: Batches, tol: float, device: str) -> list[ManifoldCheck]:
    """For each sub-layer, the worst case over every token of every batch: one forward pass per batch, each
    sub-layer's H_res (batch, time, n, n) kept and checked together."""
    model.eval()
    per_layer: list[list[torch.Tensor]] = [[] for _ in model.layers]
    for x, _ in batches:
        model(x.to(device))
        for acc, h in zip(per_layer, model.last_res, strict=True):
            acc.append(h)
    return [check_doubly_stochastic(torch.cat(hs), tol) for hs in per_layer]
