"""Token-wise combinations of two shard models q1, q2 (and the base model p0) into one protected model p.

All inputs are log-probabilities over the vocabulary in the last dimension; every output is normalised.

- CP-Delta (Vyas, Kakade & Barak 2023, "On provable copyright protection for generative models", ICML):
  p(v) = min(q1(v), q2(v)) / Z,  Z = sum_v min(q1, q2) = 1 - TV(q1, q2).
- CP-k (same paper, KL version): p(v) = sqrt(q1(v) q2(v)) / Z_B,  Z_B = sum_v sqrt(q1 q2) (Bhattacharyya).
- SCP-Delta_r (this paper; our construction, the paper's exact one is not public to us): with relative
  probabilities r_i = q_i / p0 and their min-combination r = min(r1, r2) (so p0 r = min(q1, q2)),
      qbar = p0 r / sum(p0 r)                                  (CP-Delta),
      J(v) = (qbar(v) - p0(v)) log(qbar(v) / p0(v)) >= 0      (token v's share of the Jeffreys divergence),
      S    = the fewest tokens, by decreasing J, whose J sums to >= keep_mass * sum_v J(v)   (influential tokens),
      p(v) = p0(v) r(v)^[v in S] / Z_S,   Z_S = sum_{v in S} min(q1, q2)(v) + sum_{v not in S} p0(v).
  The shift is kept (min-combined) on S and smoothed back to p0 elsewhere. Its max-divergence from the safe
  shard model q_j is, exactly (certificate.scp_max_divergence),
      log p(v)/q_j(v) = [v in S] (log r(v) - log r_j(v)) - [v not in S] log r_j(v) - log Z_S
                      <= -log Z_S + max(0, max_{v not in S} log(p0(v) / q_j(v))),
  since r <= r_j; the first term is CP-Delta's -log Z with Z_S in place of Z.
"""

from __future__ import annotations

import torch


def normalise(logits: torch.Tensor) -> torch.Tensor:
    """log p = l - log sum_v exp(l_v)."""
    return logits - torch.logsumexp(logits, dim=-1, keepdim=True)


def cp_delta(logq1: torch.Tensor, logq2: torch.Tensor) -> torch.Tensor:
    """log [min(q1, q2) / Z]."""
    return normalise(torch.minimum(logq1, logq2))


def cp_k(logq1: torch.Tensor, logq2: torch.Tensor) -> torch.Tensor:
    """log [sqrt(q1 q2) / Z_B]."""
    return normalise(0.5 * (logq1 + logq2))


def influential_sets(logp0: torch.Tensor, logq: torch.Tensor, masses: list[float]) -> list[torch.Tensor]:
    """For each keep_mass of ``masses``, the boolean mask of the fewest tokens whose Jeffreys terms
    J(v) = (q - p0) log(q / p0) carry keep_mass of sum J (one sort serves every mass; keep_mass 0 keeps none)."""
    jeff = (logq.exp() - logp0.exp()) * (logq - logp0)
    order = jeff.argsort(dim=-1, descending=True)
    sorted_j = jeff.gather(-1, order)
    before = sorted_j.cumsum(-1) - sorted_j  # mass of the strictly more influential tokens
    total = jeff.sum(-1, keepdim=True)
    return [torch.zeros_like(before, dtype=torch.bool).scatter(-1, order, before < km * total) for km in masses]


def influential_set(logp0: torch.Tensor, logq: torch.Tensor, keep_mass: float) -> torch.Tensor:
    """Boolean mask of the fewest tokens whose Jeffreys terms J(v) = (q - p0) log(q / p0) carry keep_mass of sum J."""
    return influential_sets(logp0, logq, [keep_mass])[0]


def scp_sweep(logp0: torch.Tensor, logq1: torch.Tensor, logq2: torch.Tensor,
              masses: list[float]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """SCP-Delta_r's (log p, S) at every keep_mass of ``masses`` (scp_delta_r, the influential order computed once)."""
    logr = torch.minimum(logq1, logq2) - logp0
    keeps = influential_sets(logp0, normalise(logp0 + logr), masses)
    return [(normalise(logp0 + logr * keep), keep) for keep in keeps]


def scp_delta_r(logp0: torch.Tensor, logq1: torch.Tensor, logq2: torch.Tensor,
                keep_mass: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(log p, S): p = p0 r^[S] / Z_S with r = min(q1, q2) / p0 and S = influential_set(p0, CP-Delta, keep_mass)."""
    return scp_sweep(logp0, logq1, logq2, [keep_mass])[0]


def combine_all(logp0: torch.Tensor, logq1: torch.Tensor, logq2: torch.Tensor, logq_full: torch.Tensor,
                keep_mass: float) -> dict[str, torch.Tensor]:
    """log-probabilities of every compared model: the unprotected q_full, CP-Delta, CP-k and SCP-Delta_r."""
    return {"q_full": logq_full, "cp_delta": cp_delta(logq1, logq2), "cp_k": cp_k(logq1, logq2),
            "scp_delta_r": scp_delta_r(logp0, logq1, logq2, keep_mass)[0]}
