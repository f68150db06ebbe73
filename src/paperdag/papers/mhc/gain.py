"""The composite mixing gain of a stack of residual mixing matrices (mHC paper, Sec. 3.1 and Fig. 3).

Ignoring the sub-layers, L layers map the stream as x_L = P x_0 with P = H_res^(L) ... H_res^(1). Its forward
gain is the largest absolute row sum ||P||_inf = max_i sum_j |P_ij| (how much a signal can grow going up) and its
backward gain the largest absolute column sum ||P||_1 = max_j sum_i |P_ij| (how much a gradient can grow coming
down). A doubly stochastic product has both equal to 1; the identity residual has 1 by definition.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Gain:
    """Worst case over tokens of the composite product's gains, and of the single layers' forward gains."""

    forward: float
    backward: float
    layer_max: float


def composite(mats: list[torch.Tensor]) -> torch.Tensor:
    """P = H_L ... H_1 per token in float64, for per-layer mixing matrices (..., n, n) in layer order."""
    p = torch.eye(mats[0].shape[-1], dtype=torch.float64, device=mats[0].device).expand_as(mats[0])
    for h in mats:
        p = (h.double().unsqueeze(-1) * p.unsqueeze(-3)).sum(-2)  # (H P)_ik = sum_j H_ij P_jk
    return p


def mixing_gain(mats: list[torch.Tensor]) -> Gain:
    """max over tokens of ||P||_inf and ||P||_1 for the composite P, and max over layers and tokens of ||H||_inf."""
    p = composite(mats).abs()
    layer = max(float(h.double().abs().sum(-1).amax()) for h in mats)
    return Gain(float(p.sum(-1).amax()), float(p.sum(-2).amax()), layer)
