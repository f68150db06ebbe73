"""Exact evaluation by enumeration: log pi(y | q) of every response (a trie over all sequences, read off one causal
forward pass of the K^(L-1) length-(L-1) prefixes per prompt: the last content token is read at step L - 1, which
sees only the first L - 1, and the step after it is the forced EOS), the alpha-power targets and the exact metrics.

Targets (n(y) = k + 1 generated tokens, all normalised over the R responses of each prompt):
    traj    p_alpha(y|q)  proportional to  p_base(y|q)^alpha
    token   p_tok(y|q)    proportional to  p_base(y|q)^alpha exp(-c(q) n(y)),  c(q) solving sum_y (...) = 1
            (the fixed point of the token-normalised TB, whose log Z is per token; c found by Brent's method)
    length  p_LA(y|q)     proportional to  p_base(y|q)^alpha exp(-(alpha - 1) h(q) n(y)),
            h(q) = E_base[log p_base(y|q)] / E_base[n(y)] < 0, the base model's log-likelihood per token
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.optimize import brentq

from paperdag.common.transformer import GPT

from .policy import step_log_probs
from .task import Task, all_responses, response_answers


@torch.no_grad()
def log_probs(model: GPT, task: Task, chunk: int = 8192) -> torch.Tensor:
    """(Q, R) exact log pi(y | q) of every response of every prompt (float64).

    A response y of length k is read off the row of its prefix y_1..y_{L-1} (0-padded):
    sum_{t<k} log pi(y_t+1 | q, y_<=t) + log pi(EOS | q, y) (0 at k = L, where EOS is forced)."""
    K, L = task.modulus, task.max_len
    prefixes = torch.cartesian_prod(*[torch.arange(K)] * (L - 1)).reshape(-1, L - 1)
    responses, lengths = all_responses(task)
    row = (responses[:, : L - 1] * K ** torch.arange(L - 2, -1, -1)).sum(1)  # row of y_1..y_{L-1} in `prefixes`
    dev = next(model.parameters()).device
    Q, P = len(task.prompts), len(prefixes)
    seqs = torch.cat([prefixes, torch.zeros(P, 1, dtype=torch.long)], 1)  # step_log_probs never reads y_L
    prompts, seqs = task.prompts.repeat_interleave(P, 0), seqs.repeat(Q, 1)
    steps = torch.cat([step_log_probs(model, task, pr.to(dev), sq.to(dev)).cpu()
                       for pr, sq in zip(prompts.split(chunk), seqs.split(chunk), strict=True)]).double()
    steps = steps.view(Q, P, L + 1, K + 1)[:, row]  # (Q, R, L + 1, K + 1)
    digits = steps[:, :, :L].gather(3, responses.expand(Q, -1, -1).unsqueeze(3)).squeeze(3)
    digits = torch.where(torch.arange(L) < lengths.unsqueeze(1), digits, torch.zeros_like(digits)).sum(2)
    return digits + steps.gather(2, lengths.view(1, -1, 1, 1).expand(Q, -1, 1, K + 1)).squeeze(2)[..., K]


def normalise(log_unnorm: torch.Tensor) -> torch.Tensor:
    """log p(y|q) = log p~(y|q) - logsumexp_y log p~(y|q), per prompt (row)."""
    return log_unnorm - torch.logsumexp(log_unnorm, dim=1, keepdim=True)


def token_tilt(log_power: torch.Tensor, n_tokens: torch.Tensor) -> torch.Tensor:
    """(Q,) c(q) with sum_y exp(log_power(y) - c n(y)) = 1 (decreasing in c, so the root is unique)."""
    def root(row: np.ndarray) -> float:
        return brentq(lambda c: np.logaddexp.reduce(row - c * n) , -60.0, 60.0, xtol=1e-12)

    n = n_tokens.double().numpy()
    return torch.tensor([root(row) for row in log_power.numpy()], dtype=torch.float64)


def base_rate(log_p_base: torch.Tensor, n_tokens: torch.Tensor) -> torch.Tensor:
    """(Q,) exact h(q) = E_base[log p_base(y|q)] / E_base[n(y)]."""
    p = log_p_base.exp()
    return (p * log_p_base).sum(1) / (p * n_tokens).sum(1)


def target(kind: str, log_p_base: torch.Tensor, n_tokens: torch.Tensor, alpha: float,
           h: torch.Tensor | None = None) -> torch.Tensor:
    """(Q, R) log of the target of TB variant ``kind`` (module docstring)."""
    power = alpha * log_p_base
    if kind == "traj":
        return normalise(power)
    if kind == "token":
        return power - token_tilt(power, n_tokens).unsqueeze(1) * n_tokens
    if kind == "length":
        return normalise(power - (alpha - 1.0) * h.unsqueeze(1) * n_tokens)
    raise ValueError(f"unknown TB variant {kind!r}")


def metrics(log_pi: torch.Tensor, task: Task, log_target: torch.Tensor | None = None) -> dict[str, float]:
    """Exact prompt-averaged accuracy sum_y pi(y|q) 1[ans(y) = c], entropy -sum pi log pi (nats), expected content
    length sum pi k, and (given a target) KL(pi || target) = sum_y pi (log pi - log target)."""
    responses, lengths = all_responses(task)
    correct = response_answers(responses, lengths).unsqueeze(0) == task.answers.unsqueeze(1)
    p = log_pi.exp()
    out = {"accuracy": float((p * correct).sum(1).mean()),
           "entropy": float(-(p * log_pi).sum(1).mean()),
           "length": float((p * lengths).sum(1).mean())}
    if log_target is not None:
        out["kl"] = float((p * (log_pi - log_target)).sum(1).mean())
    return out


def length_distribution(log_pi: torch.Tensor, task: Task) -> np.ndarray:
    """(L + 1,) prompt-averaged P(k content tokens) = mean_q sum_{y: |y| = k} pi(y|q)."""
    _, lengths = all_responses(task)
    p = log_pi.exp().mean(0)
    return np.array([float(p[lengths == k].sum()) for k in range(task.max_len + 1)])
