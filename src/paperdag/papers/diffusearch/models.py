"""The two same-size models and how each scores the answer region.

Both are the shared tiny transformer (``common.transformer.GPT``) with identical shape; the masked-diffusion model
(MDM) attends bidirectionally and has a ``[MASK]`` token (``common.masked_diffusion``), the autoregressive model (AR)
is causal. For answer positions j = 0..A-1 starting at index s:

    MDM:  log p(x_{s+j} | x with masked positions = [MASK])   = log_softmax(f(x))[s + j]
    AR:   log p(x_{s+j} | x_{< s+j})                          = log_softmax(f(x))[s + j - 1]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from paperdag.common.masked_diffusion import MaskedDiffusionLM
from paperdag.common.transformer import GPT, GPTConfig

KINDS = ("mdm", "ar")


def build(kind: str, cfg: GPTConfig) -> GPT:
    """A fresh model of ``kind`` ("mdm" or "ar") with the shared shape ``cfg``."""
    if kind not in KINDS:
        raise ValueError(f"unknown model kind {kind!r}")
    return MaskedDiffusionLM(cfg) if kind == "mdm" else GPT(cfg)


@torch.no_grad()
def answer_logprobs(model: GPT, kind: str, seqs: torch.Tensor, answer_start: int, answer_len: int) -> torch.Tensor:
    """(B, A, V) log-probabilities of the answer positions, as in the module docstring."""
    logits = model(seqs)
    first = answer_start if kind == "mdm" else answer_start - 1
    return torch.log_softmax(logits[:, first: first + answer_len].float(), dim=-1)


def n_params(model: GPT) -> int:
    """Number of trainable scalars."""
    return sum(p.numel() for p in model.parameters())


def predictor(model: GPT, kind: str, answer_start: int, answer_len: int, alphabet: np.ndarray,
              device: str) -> Callable[[np.ndarray], np.ndarray]:
    """rows (r, L) -> (r, A, |W|) answer log-probabilities over the answer alphabet W, as numpy."""
    def predict(rows: np.ndarray) -> np.ndarray:
        lp = answer_logprobs(model, kind, torch.from_numpy(rows).to(device), answer_start, answer_len)
        return lp[..., torch.from_numpy(alphabet).to(device)].cpu().numpy()
    return predict
