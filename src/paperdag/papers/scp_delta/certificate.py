"""Exact NAF certificates: max-divergences of a protected model p from a safe model q, by enumeration.

p is k-NAF w.r.t. a protected item C when Delta(p || safe(C)) <= k, with safe(C) a model that never saw C (Vyas et
al. 2023): the shard model without C, or the base model p0, which saw no private item.

Token level, at one context over all 256 tokens: Delta_max(p || q) = max_v log p(v) / q(v), KL = sum_v p log p / q;
the closed forms below are the derived values (tests check that the enumeration equals them).

Sequence level, at a canary prompt x over the outcomes o (the 10^D codes and "other", extraction.py):
    k_x(p || q) = max_o log P(o | x) / Q(o | x),
so P(E | x) <= e^{k_x} Q(E | x) for every set E of codes: the bound on extracting any code. Against both shard
models a k-NAF p satisfies P <= e^k Q1 and P <= e^k Q2, so 1 = sum_o P <= e^k sum_o min(Q1, Q2):
    K*_x = -log sum_o min(Q1(o | x), Q2(o | x))  (the minimax bound)
binds every method at x; the token-level analogue -log sum_v min(q1, q2) is CP-Delta's own certificate, so at the
token level no method is tighter than CP-Delta w.r.t. the shard models.
"""

from __future__ import annotations

import torch


def max_divergence(logp: torch.Tensor, logq: torch.Tensor) -> torch.Tensor:
    """Delta_max(p || q) = max_v (log p(v) - log q(v)) over the last dimension."""
    return (logp - logq).amax(dim=-1)


def kl_divergence(logp: torch.Tensor, logq: torch.Tensor) -> torch.Tensor:
    """KL(p || q) = sum_v p(v) (log p(v) - log q(v)) over the last dimension."""
    return (logp.exp() * (logp - logq)).sum(dim=-1)


def cp_delta_closed_form(logq1: torch.Tensor, logq2: torch.Tensor) -> torch.Tensor:
    """Delta_max(CP-Delta || q_j) = -log Z, Z = sum_v min(q1, q2), for both j: p / q_j <= 1 / Z with equality at
    any v where q_j <= q_other, and such a v exists because both sum to 1."""
    return -torch.logsumexp(torch.minimum(logq1, logq2), dim=-1)


def cp_k_closed_form(logq1: torch.Tensor, logq2: torch.Tensor) -> torch.Tensor:
    """KL(p || q1) + KL(p || q2) = 2 sum_v p log(p / sqrt(q1 q2)) = -2 log Z_B for p = sqrt(q1 q2) / Z_B."""
    return -2.0 * torch.logsumexp(0.5 * (logq1 + logq2), dim=-1)


def scp_closed_form(logp0: torch.Tensor, logq1: torch.Tensor, logq2: torch.Tensor, keep: torch.Tensor,
                    safe: int) -> torch.Tensor:
    """Delta_max(SCP-Delta_r || q_j) = -log Z_S + max(max_{v in S} (log r - log r_j), max_{v not in S} -log r_j),
    with r_i = q_i / p0, r = min(r1, r2), Z_S = sum_S min(q1, q2) + sum_{not S} p0 (combine.py)."""
    logr = torch.minimum(logq1, logq2) - logp0
    logr_j = (logq1 if safe == 1 else logq2) - logp0
    log_z = torch.logsumexp(logp0 + logr * keep, dim=-1)
    inside = torch.where(keep, logr - logr_j, -torch.inf).amax(-1)
    outside = torch.where(keep, -torch.inf, -logr_j).amax(-1)
    return torch.maximum(inside, outside) - log_z


def log_ratio(logp: torch.Tensor, logq: torch.Tensor) -> torch.Tensor:
    """log P(o) / Q(o) per outcome; -inf where P never emits o (it never counts), +inf where only Q never does."""
    return torch.where(torch.isneginf(logp), -torch.inf, logp - logq)


def minimax_bound(logq1: torch.Tensor, logq2: torch.Tensor) -> float:
    """K* = -log sum_o min(Q1(o), Q2(o)) over outcome log-probs: no model is below it against both shard models."""
    return float(-torch.logsumexp(torch.minimum(logq1, logq2), dim=-1))


def token_certificates(logp: torch.Tensor, logq1: torch.Tensor, logq2: torch.Tensor) -> dict[str, torch.Tensor]:
    """Per-position Delta_max and KL of p from each shard model: keys ``dmax_1, dmax_2, kl_1, kl_2``."""
    return {"dmax_1": max_divergence(logp, logq1), "dmax_2": max_divergence(logp, logq2),
            "kl_1": kl_divergence(logp, logq1), "kl_2": kl_divergence(logp, logq2)}
