"""Reference points the claims are judged against, computed exactly by enumeration.

Count model of D (the strongest trivial model of the pretraining pairs, the analogue of a count n-gram): per prompt
q, a trie of the training responses' tokens (content digits then EOS) with add-one (Laplace) smoothing at every
node,
    c(y_t | q, y_<t) = (N(q, y_<=t) + 1) / (N(q, y_<t) + K + 1)   for t < L,   EOS forced at t = L (as the policy),
where N counts the training pairs of prompt q whose response starts with that prefix. It is a normalised
distribution over the R responses of each prompt, so KL(D || count) compares with KL(D || base) on the same footing.

Power ceiling: the exact accuracy of the LA-TB target p_LA (exact.target, PowerFlow's fixed point) on a grid of alpha; the smallest
alpha whose target comes within ``gap`` of a reference accuracy (GRPO's) says how far PowerFlow's alpha is from it.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import torch

from . import exact
from .task import Task, all_responses

LAPLACE = 1.0  # add-one smoothing: the textbook count model, not fitted to D
ALPHA_GRID = tuple(float(a) for a in np.geomspace(1.0, 64.0, 49))  # 8 points per doubling of alpha


def _prefix_counts(prompts: torch.Tensor, responses: torch.Tensor, lengths: torch.Tensor,
                   modulus: int) -> Counter:
    """N(q, prefix) for every prefix (as a tuple, EOS = K appended at the end) of every training response."""
    counts: Counter = Counter()
    qs = (prompts[:, 0] * modulus + prompts[:, 1]).tolist()
    for q, r, k in zip(qs, responses.tolist(), lengths.tolist(), strict=True):
        tokens = (*r[:k], modulus)
        counts.update((q, tokens[:t]) for t in range(len(tokens) + 1))
    return counts


def count_model_log_probs(task: Task, prompts: torch.Tensor, responses: torch.Tensor,
                          lengths: torch.Tensor) -> torch.Tensor:
    """(Q, R) log c(y | q) of every response of every prompt (module docstring), from the training pairs."""
    K, L = task.modulus, task.max_len
    counts = _prefix_counts(prompts, responses, lengths, K)
    all_r, all_len = all_responses(task)
    out = torch.zeros(len(task.prompts), len(all_len), dtype=torch.float64)
    for q in range(len(task.prompts)):
        for j, (r, k) in enumerate(zip(all_r.tolist(), all_len.tolist(), strict=True)):
            tokens = (*r[:k], K)
            out[q, j] = sum(np.log((counts[(q, tokens[:t + 1])] + LAPLACE) / (counts[(q, tokens[:t])]
                                                                             + LAPLACE * (K + 1)))
                            for t in range(min(len(tokens), L)))
    return out


def kl(log_p: torch.Tensor, log_q: torch.Tensor) -> float:
    """Prompt-averaged exact KL(p || q) = mean_q sum_y p (log p - log q), with 0 log 0 = 0 (a response p never
    produces, such as D_len's empty one, adds nothing)."""
    p = log_p.exp()
    return float(torch.where(p > 0, p * (log_p - log_q), torch.zeros_like(p)).sum(1).mean())


def power_ceiling(log_base: torch.Tensor, n_tokens: torch.Tensor, task: Task, reference: float,
                  gap: float) -> dict[str, float | None]:
    """Exact accuracy of the LA-TB target on ``ALPHA_GRID`` and the smallest alpha whose target accuracy is
    at least ``reference - gap`` (None when no alpha up to the grid's end reaches it)."""
    accuracy = [exact.metrics(exact.target("length", log_base, n_tokens, a), task)["accuracy"] for a in ALPHA_GRID]
    reaching = [a for a, acc in zip(ALPHA_GRID, accuracy, strict=True) if acc >= reference - gap]
    return {"smallest_alpha_within_gap": round(reaching[0], 3) if reaching else None,
            "target_accuracy_at_largest_alpha": round(accuracy[-1], 4), "largest_alpha": ALPHA_GRID[-1]}
