"""The manifold check of trained models (the verify stage's science; no train stage imports this module).

Two measurements per sub-layer, each the worst case over every validation token of every batch:
- the H_res the trained model uses (t = ``sinkhorn_iters`` Sinkhorn-Knopp steps in float32, sinkhorn.py): its
  deviation from the Birkhoff polytope, max |H 1 - 1|, max |1^T H - 1| (reported: t = 20 is not the limit);
- for mHC, the same logits L = a_res mat(x~ phi_res) + b_res driven to the limit: the Sinkhorn-Knopp iteration of
  sinkhorn.py, in float64, continued per matrix until

      max(|M 1 - 1|_inf, |1^T M - 1|_inf) <= tol   or   k = cap   (k: row-and-column steps taken),

  then checked exactly (sinkhorn.check_doubly_stochastic): the claim is that the projection mHC approximates lands
  on the manifold, not that 20 steps reach it. For a positive matrix the iteration converges to the unique D_1 A D_2
  that is doubly stochastic (Sinkhorn 1964), linearly in k (Franklin & Lorenz 1989), so a cap is only a budget: a
  matrix not within tol by then fails the check, with its deviation.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .model import StreamGPT
from .sinkhorn import ManifoldCheck, check_doubly_stochastic

Batches = list[tuple[torch.Tensor, torch.Tensor]]


def _deviation(m: torch.Tensor) -> torch.Tensor:
    """Per matrix of ``m`` (N, n, n): max(|M 1 - 1|_inf, |1^T M - 1|_inf)."""
    return torch.maximum((m.sum(-1) - 1).abs().amax(-1), (m.sum(-2) - 1).abs().amax(-1))


def sinkhorn_to_tolerance(logits: torch.Tensor, tol: float, cap: int, check_every: int = 10
                          ) -> tuple[torch.Tensor, torch.Tensor]:
    """Sinkhorn-Knopp on L in float64 and in the log domain (l <- l - logsumexp l over the rows, then the columns:
    sinkhorn.py's iteration, so no row or column underflows whatever the spread of L) for every matrix of ``logits``
    (..., n, n), each matrix iterated (one row step, then one column step) until the deviation of M = exp(l) is
    <= ``tol`` or it has taken ``cap`` steps; the deviation is read every ``check_every`` steps (so a matrix may take
    up to check_every - 1 more than it needs), and a matrix whose deviation is not a number keeps iterating (it fails
    the check at the cap instead of passing for converged). Returns (matrices (..., n, n), steps taken per matrix
    (...))."""
    shape = logits.shape
    log_m = logits.detach().double().reshape(-1, *shape[-2:]).clone()
    steps = torch.zeros(log_m.shape[0], dtype=torch.long)
    active = torch.arange(log_m.shape[0])
    done = 0
    while active.numel() and done < cap:
        block = min(check_every, cap - done)
        a = log_m[active]
        for _ in range(block):
            a = a - torch.logsumexp(a, -1, keepdim=True)
            a = a - torch.logsumexp(a, -2, keepdim=True)
        log_m[active] = a
        done += block
        steps[active] = done
        active = active[~(_deviation(a.exp()) <= tol)]
    return log_m.exp().reshape(shape), steps.reshape(shape[:-2])


@dataclass(frozen=True)
class ConvergedCheck:
    """One sub-layer of one mHC model: the t = ``sinkhorn_iters`` H_res the model uses (``trained``) and its logits
    driven to ``tol`` (``limit``, with the most steps any token needed and whether every token got there by the
    cap)."""

    trained: ManifoldCheck
    limit: ManifoldCheck
    max_steps: int
    cap: int


@torch.no_grad()
def _sublayer_tensors(model: StreamGPT, batches: Batches, device: str) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Per sub-layer, every token's H_res as the model computes it and, for mHC connections, its H_res logits (read
    by a forward hook on the connection from the stream it receives; empty for HC)."""
    model.eval()
    res: list[list[torch.Tensor]] = [[] for _ in model.layers]
    logits: list[list[torch.Tensor]] = [[] for _ in model.layers]

    def hook(i: int):
        def read(module, args, _out) -> None:
            if hasattr(module, "logits"):
                logits[i].append(module.logits(args[0])[2].reshape(-1, model.n, model.n))
        return read

    handles = [layer.connection.register_forward_hook(hook(i)) for i, layer in enumerate(model.layers)]
    try:
        for x, _ in batches:
            model(x.to(device))
            for acc, h in zip(res, model.last_res, strict=True):
                acc.append(h.reshape(-1, model.n, model.n))
    finally:
        for h in handles:
            h.remove()
    return [torch.cat(hs) for hs in res], [torch.cat(ls) if ls else torch.empty(0) for ls in logits]


def layer_checks(model: StreamGPT, batches: Batches, tol: float, device: str) -> list[ManifoldCheck]:
    """For each sub-layer, the worst case of the H_res the model uses over every token of every batch."""
    res, _ = _sublayer_tensors(model, batches, device)
    return [check_doubly_stochastic(h, tol) for h in res]


def converged_checks(model: StreamGPT, batches: Batches, tol: float, cap: int, device: str) -> list[ConvergedCheck]:
    """For each sub-layer of an mHC model: the t = sinkhorn_iters H_res it uses, and its logits' Sinkhorn limit
    (``sinkhorn_to_tolerance``) checked exactly at ``tol`` (both checks at ``tol``)."""
    res, logits = _sublayer_tensors(model, batches, device)
    out = []
    for h, lg in zip(res, logits, strict=True):
        if not lg.numel():
            raise ValueError("converged_checks needs mHC connections (H_res logits); HC has none")
        limit, steps = sinkhorn_to_tolerance(lg.cpu(), tol, cap)
        out.append(ConvergedCheck(check_doubly_stochastic(h, tol), check_doubly_stochastic(limit, tol),
                                  int(steps.max()), cap))
    return out
