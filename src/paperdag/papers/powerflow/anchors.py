"""Exact targets anchored twice, and the sharpening ladder: what a TB run's end point can be judged on.

A claim on where a TB run ends (its accuracy, entropy or length) is judged only where its exact target has the
property, enumerated from the data distribution D (task.data_log_probs) and from the learned model (exact.log_probs),
both reported: a property the learned base's target has only through the base model's error is not the paper's.

- power anchors: the exact metrics (exact.metrics) of a start distribution p and of its alpha-power targets
  (exact.target: trajectory-level p^alpha and PowerFlow's LA-TB fixed point p^alpha exp(-lambda n)), and, as an
  ablation beside them, the package's former length-aware target p^alpha exp(-(alpha - 1) h n) under both estimators
  of the per-token rate h of p (exact.RATES: ratio E_p[log p] / E_p[n], slope Cov_p(log p, n) / Var_p(n)).
  log 0 (D_len's empty response, an incorrect response under D conditioned on correctness) is read as LOG_ZERO,
  whose exp underflows to 0 exactly in float64, so 0 log 0 = 0 in every sum.
- the aligned model's data analogue: D conditioned on a correct answer, D(y|q) 1[ans(y) = c] / P_D(correct | q),
  the limit of supervised reward maximisation regularised toward D (pi ~ D exp(r / beta), beta -> 0).
- temperature 1/alpha decoding (the sharpening ladder's rung beside sampling and greedy decoding): each next token
  (a digit or EOS; EOS forced after L digits) drawn from p(t | prefix)^alpha / sum_t' p(t' | prefix)^alpha, where
  p(t | prefix) = M(prefix + t) / M(prefix), M(prefix) the mass of the responses extending the prefix, and
  p(EOS | prefix) = p(prefix) / M(prefix); P_T(y) is the product over its tokens (exact, from the response table).
"""

from __future__ import annotations

import torch

from . import exact
from .task import Task, all_responses, response_answers

LOG_ZERO = -1e4


def safe(log_p: torch.Tensor) -> torch.Tensor:
    """log p with log 0 read as LOG_ZERO (module docstring)."""
    return log_p.clamp(min=LOG_ZERO)


def power_anchor(log_p: torch.Tensor, task: Task, alpha: float) -> dict[str, dict[str, float]]:
    """Exact metrics of ``start`` = p, of its alpha-power targets ``traj`` and ``length`` (LA-TB) and of the former
    form's targets ``rate_ratio`` and ``rate_slope`` (module docstring)."""
    log_p = safe(log_p)
    n_tokens = (all_responses(task)[1] + 1).double()
    out = {"start": exact.metrics(log_p, task)}
    out |= {kind: exact.metrics(safe(exact.target(kind, log_p, n_tokens, alpha)), task) for kind in ("traj", "length")}
    return out | {f"rate_{name}": exact.metrics(safe(exact.target("rate", log_p, n_tokens, alpha, rate(log_p, n_tokens))),
                                                task) for name, rate in exact.RATES.items()}


def correct_only(log_p: torch.Tensor, task: Task) -> torch.Tensor:
    """(Q, R) log of p conditioned on a correct answer (module docstring), log 0 as LOG_ZERO."""
    responses, lengths = all_responses(task)
    correct = response_answers(responses, lengths).unsqueeze(0) == task.answers.unsqueeze(1)
    return safe(exact.normalise(torch.where(correct, safe(log_p), torch.full_like(log_p, LOG_ZERO))))


def tempered(log_p: torch.Tensor, task: Task, alpha: float) -> torch.Tensor:
    """(Q, R) exact log P_T(y | q) of temperature-1/alpha decoding of p (module docstring)."""
    K, L = task.modulus, task.max_len
    responses, lengths = all_responses(task)
    seqs = [tuple(r[:k]) for r, k in zip(responses.tolist(), lengths.tolist(), strict=True)]
    index = {s: j for j, s in enumerate(seqs)}
    extending: dict[tuple[int, ...], list[int]] = {}
    for j, s in enumerate(seqs):
        for t in range(len(s) + 1):
            extending.setdefault(s[:t], []).append(j)
    log_p = safe(log_p)
    mass = {prefix: torch.logsumexp(log_p[:, rows], dim=1) for prefix, rows in extending.items()}
    step: dict[tuple[int, ...], torch.Tensor] = {}  # prefix -> (Q, K + 1) tempered log p(next token | prefix)
    for prefix in extending:
        if len(prefix) == L:
            continue
        nxt = torch.stack([mass[(*prefix, d)] for d in range(K)] + [log_p[:, index[prefix]]], 1)
        step[prefix] = torch.log_softmax(alpha * (nxt - mass[prefix].unsqueeze(1)), dim=1)
    out = torch.zeros_like(log_p)
    for j, s in enumerate(seqs):
        terms = [step[s[:t]][:, s[t]] for t in range(len(s))] + ([step[s][:, K]] if len(s) < L else [])
        out[:, j] = torch.stack(terms, 1).sum(1) if terms else 0.0
    return out
