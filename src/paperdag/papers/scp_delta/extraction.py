"""Training-data extraction attacks on a canary, by exact enumeration of the canary space (Carlini et al. 2019).

For a prompt x and D-digit codes c = c_1..c_D (the space has N = 10^D codes),
    log P(c | x) = sum_{d=1}^{D} log p(c_d | x, c_{<d}),
computed for all N codes from one pass over the 10^(D-1) continuations x c_1..c_{D-1} (lm.continuation_logprobs):
the row of prefix i gives the next-token distributions at the D positions after x, c_1, ..., c_{D-1}.
    rank(c*)  = #{c : log P(c | x) >= log P(c* | x)} (ties count against the canary),
    exposure  = log2 N - log2 rank(c*) (bits),
so a memorised canary scores log2 N and a random one about log2 e ~ 1.44 bits. The sampled attack succeeds with
probability P(c* | x) exactly; the greedy attack takes argmax_v over all 256 tokens at each step and succeeds when
the D argmaxes spell c* (a non-digit argmax fails).
The outcome space of the certificates is the N codes and "other" (a non-digit among the first D tokens), with
    P(other | x) = sum_{t=0}^{D-1} sum_{c_1..c_t} P(c_1..c_t | x) p(non-digit | x, c_1..c_t),
summed in log space from each step's non-digit mass (exact; not 1 - sum_c P(c), which cancels catastrophically).
"""

from __future__ import annotations

import numpy as np
import torch

from paperdag.common.tokenizer import encode

DIGIT_IDS = torch.as_tensor(encode("0123456789"), dtype=torch.long)
NON_DIGIT_IDS = torch.as_tensor([v for v in range(256) if v not in set(DIGIT_IDS.tolist())], dtype=torch.long)


def prefix_digits(digits: int) -> torch.Tensor:
    """All 10^(digits-1) digit prefixes c_1..c_{D-1} as a (10^(D-1), D-1) integer tensor, in numeric order."""
    n = 10 ** (digits - 1)
    powers = 10 ** torch.arange(digits - 2, -1, -1)
    return (torch.arange(n)[:, None] // powers) % 10


def digit_suffixes(digits: int) -> torch.Tensor:
    """Token ids (10^(D-1), D - 1) of every digit prefix c_1..c_{D-1}, in numeric order (what follows the prompt)."""
    return DIGIT_IDS[prefix_digits(digits)]


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


def other_logprob(step_logp: torch.Tensor) -> torch.Tensor:
    """log P(other | x) from step_logp (10^(D-1), D, V), the next-token log-probabilities at the D positions after
    the prompt for every digit prefix in numeric order (module docstring)."""
    digits = step_logp.shape[1]
    pre = prefix_digits(digits)
    rest = torch.logsumexp(step_logp[..., NON_DIGIT_IDS], dim=-1)  # (n, D)
    prefix = torch.zeros(len(pre), dtype=step_logp.dtype)  # log P(c_1..c_t | x) of each row's first t digits
    terms = []
    for t in range(digits):
        first_row = (pre[:, t:] == 0).all(-1)  # one row per t-digit prefix: the one whose later digits are 0
        terms.append((prefix + rest[:, t])[first_row])
        if t < digits - 1:
            prefix = prefix + step_logp[:, t, :].gather(-1, DIGIT_IDS[pre[:, t]][:, None]).squeeze(-1)
    return torch.logsumexp(torch.cat(terms), dim=0)


def outcome_logprobs(step_logp: torch.Tensor) -> torch.Tensor:
    """log P over the N + 1 outcomes (the codes in numeric order, then "other") from step_logp (10^(D-1), D, V)."""
    return torch.cat([code_logprobs(digit_steps(step_logp)[0]), other_logprob(step_logp)[None]])


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
