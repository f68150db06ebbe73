"""The compared methods: one network and budget, different data and conditioning.

  miro:   conditioned on the caption and on all R binned rewards (mask m = 1); sampled at r = 1 (every reward in its
          top bin) against the contrast (empty caption, r = 0) (Dufour et al., MIRO, ICML 2026);
  single: conditioned on the caption and one reward (m = e_j), sampled at r_j = 1 against (empty, r_j = 0)
          (single-reward conditioning, as in reward/aesthetic-conditioned pre-training);
  filter: conditioned on the caption only, trained on the top ``fraction`` of the data by one reward (the usual
          aesthetic-filtering pipeline), classifier-free guidance against the empty caption;
  base:   conditioned on the caption only, trained on all the data, classifier-free guidance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .flow import Condition
from .rewards import REWARDS


@dataclass(frozen=True)
class Method:
    """Which rewards condition the model (mask over REWARDS) and which data rows it trains on."""

    name: str
    mask: np.ndarray
    filter_reward: int | None
    fraction: float

    def rows(self, rewards: np.ndarray) -> np.ndarray:
        """Training rows: all, or the top ``fraction`` by the filter reward (stable order, ties kept by index)."""
        if self.filter_reward is None:
            return np.arange(len(rewards))
        keep = max(1, round(self.fraction * len(rewards)))
        return np.sort(np.argsort(-rewards[:, self.filter_reward], kind="stable")[:keep])

    def conditions(self, tokens: torch.Tensor, targets: torch.Tensor) -> tuple[Condition, Condition]:
        """(pos, neg): pos = (caption, targets r, mask), neg = (empty caption, r = 0, mask)."""
        mask = torch.as_tensor(self.mask, dtype=targets.dtype, device=targets.device).expand(len(tokens), -1)
        r = targets.expand(len(tokens), -1)
        return Condition(tokens, r, mask), Condition(torch.zeros_like(tokens), torch.zeros_like(r), mask)


def method(name: str, single_reward: str, filter_reward: str, fraction: float) -> Method:
    """The Method of ``name`` (one of METHODS)."""
    mask = {"miro": np.ones(len(REWARDS)), "single": np.eye(len(REWARDS))[REWARDS.index(single_reward)]}
    filtered = REWARDS.index(filter_reward) if name == "filter" else None
    return Method(name, mask.get(name, np.zeros(len(REWARDS))), filtered, fraction)
