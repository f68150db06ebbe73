"""Exact evaluation by enumeration: log pi(y | q) of every response (a trie over all sequences, read off one causal
forward pass of the K^(L-1) length-(L-1) prefixes per prompt: the last content token is read at step L - 1, which
sees only the first L - 1, and the step after it is the forced EOS), the alpha-power targets and the exact metrics.

Targets (n(y) = k + 1 generated tokens, all normalised over the R responses of each prompt):
    traj    p_alpha(y|q)  proportional to  p_base(y|q)^alpha                     (the fixed point of Eq. 5's TB)
    length  p_LA(y|q)     proportional to  p_base(y|q)^alpha exp(-lambda(q) n(y)),  lambda(q) solving
            sum_y p_base^alpha e^{-lambda n} = 1 (Brent's method): the fixed point of PowerFlow's LA-TB
            (objectives.py), whose learned log Z'(q) is lambda(q) at convergence
    rate    p_base(y|q)^alpha exp(-(alpha - 1) h(q) n(y)), normalised: the package's former length-aware target (an
            ablation, exact only, never trained), for a given per-token rate h(q) < 0 of the start distribution:
            ratio_rate  h = E_p[log p(y|q)] / E_p[n(y)]               (ratio of means)
            slope_rate  h = Cov_p(log p, n) / Var_p(n)                (the p-weighted least-squares slope of log p
                        on n: the per-token decay of log p with length)
            On a distribution whose log p is exactly linear in n, log p = a + s n, the slope is s and the tilt
            exp(-(alpha - 1) s n) removes the alpha-rescaled part of the decay, so the target keeps p's length
            distribution; the ratio (a + s E n) / E n differs from s by a / E n.
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


def length_tilt(log_power: torch.Tensor, n_tokens: torch.Tensor) -> torch.Tensor:
    """(Q,) lambda(q) with f(lambda) = logsumexp_y(log_power(y) - lambda n(y)) = 0. f decreases in lambda (n >= 1),
    so the root is unique; it is bracketed by min_y log_power(y) / n(y) (one term alone reaches 0) and
    max(logsumexp log_power, 0) / min n (every term at most its value at lambda = 0, shifted by lambda min n)."""
    n = n_tokens.double().numpy()

    def root(row: np.ndarray) -> float:
        lo = float(np.min(row / n)) - 1.0
        hi = max(float(np.logaddexp.reduce(row)), 0.0) / float(n.min()) + 1.0
        return brentq(lambda c: np.logaddexp.reduce(row - c * n), lo, hi, xtol=1e-12)

    return torch.tensor([root(row) for row in log_power.numpy()], dtype=torch.float64)


def ratio_rate(log_p: torch.Tensor, n_tokens: torch.Tensor) -> torch.Tensor:
    """(Q,) exact h(q) = E_p[log p(y|q)] / E_p[n(y)] (module docstring)."""
    p = log_p.exp()
    return (p * log_p).sum(1) / (p * n_tokens).sum(1)


def slope_rate(log_p: torch.Tensor, n_tokens: torch.Tensor) -> torch.Tensor:
    """(Q,) exact h(q) = Cov_p(log p, n) / Var_p(n) = sum_y p (log p - E log p)(n - E n) / sum_y p (n - E n)^2."""
    p = log_p.exp()
    mean_n = (p * n_tokens).sum(1, keepdim=True)
    mean_lp = (p * log_p).sum(1, keepdim=True)
    return (p * (log_p - mean_lp) * (n_tokens - mean_n)).sum(1) / (p * (n_tokens - mean_n) ** 2).sum(1)


RATES = {"ratio": ratio_rate, "slope": slope_rate}


def target(kind: str, log_p_base: torch.Tensor, n_tokens: torch.Tensor, alpha: float,
           h: torch.Tensor | None = None) -> torch.Tensor:
    """(Q, R) log of the normalised target ``kind`` (module docstring); ``h`` (Q,) only for ``rate``."""
    power = alpha * log_p_base
    if kind == "traj":
        return normalise(power)
    if kind == "length":
        return power - length_tilt(power, n_tokens).unsqueeze(1) * n_tokens
    if kind == "rate":
        return normalise(power - (alpha - 1.0) * h.unsqueeze(1) * n_tokens)
    raise ValueError(f"unknown target {kind!r}")


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
