"""Guidance ablation: which half of MIRO's contrast condition does the work.

MIRO samples with v_w = v(pos) + w (v(pos) - v(neg)), pos = (caption c, top bins r = 1). The negative decides what
the guidance pushes away from (flow.guided_velocity):
  caption_reward: neg = (empty caption, r = 0)   (MIRO's sampler: both directions at once);
  reward:         neg = (c, r = 0)               (the caption held fixed: the push is along the rewards only);
  caption:        neg = (empty caption, r = 1)   (the rewards held fixed: classifier-free guidance on the caption);
  none:           w = 0                          (the conditional model).
Each mode's samples are scored by the aggregate reward (evaluation.py: the mean over rewards of z, each reward
standardised over the training data) and by the evaluator's GenEval-like overall accuracy (detector.geneval).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from .detector import Detector, geneval
from .flow import Condition, VelocityNet, sample
from .rewards import REWARDS, all_rewards, standardise
from .scenes import SIZE

MODES = ("caption_reward", "reward", "caption", "none")


def negative(mode: str, tokens: Tensor, top: Tensor) -> Condition:
    """The contrast condition of ``mode`` for captions ``tokens`` (every reward conditioned, mask 1)."""
    mask = torch.ones_like(top)
    empty, low = torch.zeros_like(tokens), torch.zeros_like(top)
    caption, rewards = {"caption_reward": (empty, low), "reward": (tokens, low), "caption": (empty, top),
                        "none": (tokens, top)}[mode]
    return Condition(caption, rewards, mask)


def ablate(net: VelocityNet, det: Detector, evaluator: Detector, prompts: Tensor, reference: np.ndarray,
           guidance: float, n_steps: int, seed: int, min_pixels: int) -> dict[str, dict[str, float]]:
    """Per mode of MODES: the aggregate reward ("aggregate") and GenEval overall ("geneval") of MIRO's samples (one
    per prompt, every target at its top bin), from the same initial noise (a generator seeded by ``seed``)."""
    top = torch.ones(len(prompts), len(REWARDS), device=prompts.device)
    pos = Condition(prompts, top, torch.ones_like(top))
    out = {}
    for mode in MODES:
        gen = torch.Generator(device=prompts.device).manual_seed(seed)
        w = 0.0 if mode == "none" else guidance
        x = sample(net, pos, negative(mode, prompts, top), w, n_steps, (3, SIZE, SIZE), gen)
        r = all_rewards(det, x, prompts.cpu().numpy(), min_pixels).cpu().numpy()
        out[mode] = {"aggregate": float(np.mean([standardise(r[:, j], reference[:, j]).mean()
                                                 for j in range(len(REWARDS))])),
                     "geneval": float(geneval(evaluator, x, prompts.cpu().numpy())["overall"].float().mean())}
    return out
