"""Distributed NorMuon: orthogonalization spread over ranks, results all-gathered (torch.distributed).

Parameters are assigned round-robin: within a group, parameter i belongs to rank i mod world_size. For each
consecutive block of world_size parameters, every rank computes the NorMuon direction of the one parameter it owns
(momentum, Newton-Schulz, row normalisation; its optimizer state lives only on that rank), flattens it into a
buffer padded to the block's largest parameter, and ``all_gather`` hands every rank all directions of the block;
each rank then applies W <- W (1 - lr wd) - lr D to every parameter. Gradients must already be identical on all
ranks (averaged by data parallelism, e.g. DDP) before ``step``. Backend: gloo on CPU, nccl on GPU.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.distributed as dist

from .optim import NorMuon


class DistributedNorMuon(NorMuon):
    """NorMuon whose per-parameter work is sharded round-robin over the ranks of the default process group."""

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:
        """Same update as ``NorMuon.step``, each direction computed on its owner rank and all-gathered."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        world, rank = dist.get_world_size(), dist.get_rank()
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            for base in range(0, len(params), world):
                block = params[base : base + world]
                size = max(p.numel() for p in block)
                local = torch.zeros(size, dtype=block[0].dtype, device=block[0].device)
                if rank < len(block):
                    mine = block[rank]
                    local[: mine.numel()] = self.direction(mine, group).flatten()
                gathered = [torch.empty_like(local) for _ in range(world)]
                dist.all_gather(gathered, local)
                for p, d in zip(block, gathered, strict=False):
                    self.apply(p, d[: p.numel()].view_as(p), group)
        return loss
