"""Final scores on a held-out prompt set larger than the training curves' (the curves stay on the prepared prompts).

After the last step each seed's final EMA generator is scored again (evaluation.score) on ``n`` fresh evaluation
captions with ``per_prompt`` samples each, the same captions for every method (a generator of their own, seeded by
(seed, "final"), so each train stage and evaluate draw them alike), so that the per-seed finals carry less sampling
noise than the 64-prompt checkpoints: the binomial standard error of a GenEval share p from N samples is
sqrt(p (1 - p) / N).
"""

from __future__ import annotations

import zlib

import numpy as np
import torch

from .detector import Detector
from .evaluation import Sampler, generate, score
from .flow import VelocityNet
from .methods import Method
from .scenes import sample_captions


def held_out_prompts(seed: int, n: int) -> np.ndarray:
    """The final comparison's ``n`` captions (token rows), from numpy PCG64 seeded by (seed, crc32("final"))."""
    return sample_captions(np.random.default_rng([seed, zlib.crc32(b"final")]), n)


def final_scores(nets: list[VelocityNet], m: Method, prompts: torch.Tensor, det: Detector, evaluator: Detector,
                 reference: np.ndarray, s: Sampler, min_pixels: int) -> dict[str, list[float]]:
    """Per score, the values of each net (one per seed, in order) on ``prompts`` at every reward target 1."""
    rows = []
    for net in nets:
        x, tokens = generate(net, m, prompts, torch.ones(len(m.mask), device=prompts.device), s)
        rows.append(score(det, evaluator, x, tokens, reference, s.per_prompt, min_pixels))
    return {k: [r[k] for r in rows] for k in rows[0]}
