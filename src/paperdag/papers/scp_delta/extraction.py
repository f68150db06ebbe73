"""Training-data extraction attacks on a canary, by exact enumeration of the canary space (Carlini et al. 2019).

For a prompt x and D-digit codes c = c_1..c_D (the space has N = 10^D codes),
    log P(c | x) = sum_{d=1}^{D} log p(c_d | x, c_{<d}),
computed for all N codes from one forward pass over the 10^(D-1) prompts x c_1..c_{D-1}: the row of prefix i gives
the next-token distributions at the D positions after x, c_1, ..., c_{D-1}.
    rank(c*)  = #{c : log P(c | x) >= log P(c* | x)} (ties count against the canary),
    exposure  = log2 N - log2 rank(c*) (bits),
so a memorised canary scores log2 N and a random one about log2 e ~ 1.44 bits. The sampled attack succeeds with
probability P(c* | x) exactly; the greedy attack takes argmax_v over all 256 tokens at each step and succeeds when
the D argmaxes spell c* (a non-digit argmax fails).
"""

from __future__ import annotations

import numpy as np
import torch

from paperdag.common.tokenizer import encode

DIGIT_IDS = torch.as_tensor(encode("0123456789"), dtype=torch.long)


def prefix_digits(digits: int) -> torch.Tensor:
    """All 10^(digits-1) digit prefixes c_1..c_{D-1} as a (10^(D-1), D-1) integer tensor, in numeric order."""
    n = 10 ** (digits - 1)
    powers = 10 ** torch.arange(digits - 2, -1, -1)
    return (torch.arange(n)[:, None] // powers) % 10


def enumeration_inputs(prompt: str, digits: int) -> torch.Tensor:
    """Token ids (10^(D-1), len(prompt) + D - 1): the prompt followed by every digit prefix."""
    head = torch.as_tensor(encode(prompt), dtype=torch.long)
    tail = DIGIT_IDS[prefix_digits(digits)]
    return torch.cat([head.expand(len(tail), -1), tail], dim=1)


def digit_steps(step_logp: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """From step_logp (n, D, V), the log-probabilities of the ten digits (n, D, 10) and the argmax token (n, D)."""
    return step_logp[..., DIGIT_IDS], step_logp.argmax(-1)


def code_logprobs(digit_logp: torch.Tensor) -> torch.Tensor:
    """log P(c | x) for all 10^D codes, in numeric order, from digit_logp (10^(D-1), D, 10): the digits'
    log-probabilities at the D positions after the prompt, for every digit prefix in numeric order."""
    digits = digit_logp.shape[1]
    pre = prefix_digits(digits)  # (n, D-1)
    prefix_sum = digit_logp[:, :-1, :].gather(-1, pre[..., None]).squeeze(-1).sum(-1)  # (n,)
    return (prefix_sum[:, None] + digit_logp[:, -1, :]).reshape(-1)


def exposure(logp_codes: torch.Tensor, code: int) -> float:
    """log2 N - log2 rank(code), rank = #{codes at least as likely} (a uniform model scores 0)."""
    rank = int((logp_codes >= logp_codes[code]).sum())
    return float(np.log2(len(logp_codes)) - np.log2(rank))


def greedy_hit(argmax: torch.Tensor, code: str) -> bool:
    """True when greedy decoding over the whole vocabulary reproduces ``code``: argmax (10^(D-1), D) holds the argmax
    token at each of the D steps for every digit prefix, and the path follows the code's own prefix."""
    digits = argmax.shape[1]
    row = int(code[:-1] or "0")  # the row of the code's first D-1 digits; step d only depends on its first d digits
    return all(int(argmax[row, d]) == int(DIGIT_IDS[int(code[d])]) for d in range(digits))
