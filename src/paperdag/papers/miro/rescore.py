"""Final scores on a held-out prompt set larger than the training curves' (the curves stay on the prepared prompts).

At the last checkpoint every method's generator of every seed is scored again (evaluation.score) on ``n`` fresh
evaluation captions with ``per_prompt`` samples each, drawn from one seeded generator and shared by every method,
so that the per-seed finals carry less sampling noise than the 64-prompt checkpoints: the binomial standard error
of a GenEval share p from N samples is sqrt(p (1 - p) / N).
"""

from __future__ import annotations

import numpy as np
import torch

from .detector import Detector
from .evaluation import Sampler, generate, score
from .flow import load_net
from .methods import Method


def final_scores(nets: dict[str, dict[str, torch.Tensor]], methods: dict[str, Method], seeds: list[int],
                 prompts: torch.Tensor, det: Detector, evaluator: Detector, reference: np.ndarray, s: Sampler,
                 spec: tuple[int, int, int], min_pixels: int) -> dict[str, dict[str, np.ndarray]]:
    """Per method, per score: the values of each seed's final EMA generator (seeds in the given order) on
    ``prompts`` at every reward target 1 (``nets[method]`` holds the weights under "s<seed>.")."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for name, m in methods.items():
        rows = []
        for seed in seeds:
            net = load_net(nets[name], f"s{seed}.", 3 * 16 * 16, *spec)
            x, tokens = generate(net, m, prompts, torch.ones(spec[2], device=prompts.device), s)
            rows.append(score(det, evaluator, x, tokens, reference, s.per_prompt, min_pixels))
        out[name] = {k: np.array([r[k] for r in rows]) for k in rows[0]}
    return out
