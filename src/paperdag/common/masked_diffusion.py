"""Masked diffusion language model (MDM) on the shared tiny transformer (``common.transformer``).

The denoiser is the same GPT with its causal attention made bidirectional, over the byte vocabulary plus one
``[MASK]`` token (id 256). Training draws t ~ U(t_min, 1), masks each maskable token independently with
probability t, and minimises either the masked-diffusion ELBO (Sahoo et al. 2024, MDLM; Nie et al. 2025, LLaDA)

    L = E_t [ (1/t) * (1/|M|) * sum_{i masked} -log p_theta(x_i | x_masked) ],   |M| = number of maskable tokens,

or (``elbo=False``) its unweighted surrogate, the mean cross-entropy over masked tokens (MaskGIT), which has lower
variance at small batch sizes. Either way every masking ratio is seen in training and the model can infill any
subset of positions in any order.
"""

from __future__ import annotations

from dataclasses import replace

import torch
import torch.nn.functional as F

from paperdag.common.tokenizer import VOCAB_SIZE
from paperdag.common.transformer import GPT, CausalSelfAttention, GPTConfig

MASK_ID = VOCAB_SIZE  # one token past the byte vocabulary


class BidirectionalSelfAttention(CausalSelfAttention):
    """softmax(Q K^T / sqrt(d_head)) V over ``n_head`` heads with no causal mask (every position sees every other)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.n_head, d // self.n_head).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=False)
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


def mdm_config(cfg: GPTConfig) -> GPTConfig:
    """``cfg`` with one extra vocabulary entry for ``[MASK]``."""
    return replace(cfg, vocab_size=VOCAB_SIZE + 1)


class MaskedDiffusionLM(GPT):
    """The shared GPT (same layout and size) with bidirectional attention and a ``[MASK]`` token."""

    def __init__(self, cfg: GPTConfig):
        super().__init__(mdm_config(cfg))
        for block in self.blocks:
            attn = BidirectionalSelfAttention(self.cfg)
            attn.load_state_dict(block.attn.state_dict())
            block.attn = attn


def mask_tokens(x: torch.Tensor, maskable: torch.Tensor, gen: torch.Generator,
                t_min: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(x_t, masked, t): t ~ U(t_min, 1) per row, each maskable token replaced by [MASK] with probability t; a row
    with no masked token gets its first maskable token masked so every row carries a loss."""
    b = x.shape[0]
    t = t_min + (1 - t_min) * torch.rand(b, 1, generator=gen).to(x.device)
    u = torch.rand(x.shape, generator=gen).to(x.device)
    masked = (u < t) & maskable
    empty = ~masked.any(dim=1)
    first = maskable.float().argmax(dim=1)
    masked[empty, first[empty]] = True
    return torch.where(masked, torch.full_like(x, MASK_ID), x), masked, t


def masked_diffusion_loss(model: MaskedDiffusionLM, x: torch.Tensor, maskable: torch.Tensor, gen: torch.Generator,
                          t_min: float = 1e-3, elbo: bool = True) -> torch.Tensor:
    """The ELBO above: (1/t)-weighted cross-entropy of the masked tokens, per maskable token, averaged over rows.
    With ``elbo=False``, the unweighted mean cross-entropy over masked tokens (MaskGIT's lower-variance surrogate)."""
    xt, masked, t = mask_tokens(x, maskable, gen, t_min)
    logits = model(xt)
    nll = F.cross_entropy(logits.flatten(0, 1), x.flatten(), reduction="none").view_as(x)
    if not elbo:
        return (nll * masked).sum() / masked.sum()
    per_row = (nll * masked).sum(dim=1) / maskable.sum(dim=1).clamp(min=1)
    return (per_row / t.squeeze(1)).mean()
