"""Scoring generated images: the rewards, GenEval-like checks, diversity, efficiency and controllability.

  reward_j    = mean over samples of reward j (raw units, rewards.py);
  z_j         = mean of reward j standardised by its mean and std over the training data; aggregate = mean_j z_j;
  geneval_k   = share of samples passing check k (object, colour, position, overall; detector.geneval) by the
                evaluator, a detector trained on renders disjoint from the reward detector's (no reward uses it);
  diversity   = mean over prompts of the mean pairwise distance ||f(x_a) - f(x_b)|| of the L2-normalised evaluator
                features f of the samples of one prompt (a feature-space, LPIPS-like spread in [0, 2], so feature
                magnitude cannot drive it);
  steps_to_reach(curve, v) = the first checkpoint whose value is >= v (speed-up = final step / that step).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from .detector import Detector, geneval
from .flow import VelocityNet, sample
from .methods import Method
from .rewards import REWARDS, all_rewards, standardise
from .scenes import SIZE


@dataclass(frozen=True)
class Sampler:
    """How images are drawn for evaluation: guidance weight, Euler steps, samples per prompt, noise seed."""

    guidance: float
    n_steps: int
    per_prompt: int
    seed: int


def generate(net: VelocityNet, m: Method, prompts: Tensor, targets: Tensor, s: Sampler) -> tuple[Tensor, Tensor]:
    """(images, tokens): ``per_prompt`` samples of each prompt at reward ``targets``; the same initial noise for
    every model (a generator seeded by ``s.seed``)."""
    tokens = prompts.repeat_interleave(s.per_prompt, 0)
    gen = torch.Generator(device=prompts.device).manual_seed(s.seed)
    pos, neg = m.conditions(tokens, targets)
    return sample(net, pos, neg, s.guidance, s.n_steps, (3, SIZE, SIZE), gen), tokens


def diversity(features: Tensor, per_prompt: int) -> float:
    """Mean over prompts of the mean pairwise Euclidean distance among the ``per_prompt`` samples' L2-normalised
    features."""
    f = torch.nn.functional.normalize(features, dim=-1).view(-1, per_prompt, features.shape[-1])
    d = torch.cdist(f, f)
    return float(d.sum((1, 2)).mean() / (per_prompt * (per_prompt - 1)))


def score(det: Detector, evaluator: Detector, images: Tensor, tokens: Tensor, reference: np.ndarray, per_prompt: int,
          min_pixels: int) -> dict[str, float]:
    """reward_j, z_j, aggregate (rewards from ``det``), geneval_k and diversity (from ``evaluator``) of one batch of
    samples (module docstring)."""
    t = tokens.cpu().numpy()
    r = all_rewards(det, images, t, min_pixels).cpu().numpy()
    z = np.stack([standardise(r[:, j], reference[:, j]) for j in range(len(REWARDS))], 1)
    out = {f"reward_{name}": float(r[:, j].mean()) for j, name in enumerate(REWARDS)}
    out |= {f"z_{name}": float(z[:, j].mean()) for j, name in enumerate(REWARDS)}
    out["aggregate"] = float(z.mean())
    out |= {f"geneval_{k}": float(v.float().mean()) for k, v in geneval(evaluator, images, t).items()}
    with torch.no_grad():
        out["diversity"] = diversity(evaluator.features(images), per_prompt)
    return out


def steps_to_reach(steps: np.ndarray, values: np.ndarray, target: float) -> int | None:
    """The first checkpoint step whose value is >= target (None if no checkpoint reaches it)."""
    hit = np.flatnonzero(values >= target)
    return int(steps[hit[0]]) if len(hit) else None


def controllability(net: VelocityNet, det: Detector, m: Method, prompts: Tensor, levels: list[np.ndarray],
                    s: Sampler, min_pixels: int) -> list[np.ndarray]:
    """For each reward j and each bin level l of j: mean reward j of samples with r_j = l, every other r at 1."""
    curves = []
    for j, lv in enumerate(levels):
        means = []
        for level in lv:
            targets = torch.ones(len(REWARDS), device=prompts.device)
            targets[j] = float(level)
            images, tokens = generate(net, m, prompts, targets, s)
            means.append(float(all_rewards(det, images, tokens.cpu().numpy(), min_pixels)[:, j].mean()))
        curves.append(np.array(means))
    return curves
