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
from scipy.stats import binom

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


def _prefix_masses(log_d: torch.Tensor, task: Task) -> tuple[np.ndarray, np.ndarray]:
    """The trie of D under the count model: (Q, S) node masses m_q(s) = D_q(y starts with s) of the S prefixes s
    with |s| < L, and (Q, S, K + 1) child masses m_q(s x): x a digit, the mass of the prefix s x; x = EOS (index K),
    D_q(y = s)."""
    K, L = task.modulus, task.max_len
    responses, lengths = all_responses(task)
    d = log_d.exp().double().numpy()
    nodes = [tuple(r[:k]) for r, k in zip(responses.tolist(), lengths.tolist(), strict=True) if k < L]
    index = {s: i for i, s in enumerate(nodes)}
    mass = np.zeros((d.shape[0], len(nodes)))
    child = np.zeros((d.shape[0], len(nodes), K + 1))
    for j, (r, k) in enumerate(zip(responses.tolist(), lengths.tolist(), strict=True)):
        for t in range(min(k + 1, L)):
            mass[:, index[tuple(r[:t])]] += d[:, j]
            child[:, index[tuple(r[:t])], r[t] if t < k else K] += d[:, j]
    return mass, child


def _expected_log(n: int, p: np.ndarray, shift: float) -> np.ndarray:
    """E log(N + shift) for N ~ Binomial(n, p), elementwise over p: the sum over the binomial pmf, on the counts
    within 40 standard deviations (+ 40) of the mean (the mass outside is below double precision's resolution)."""
    out = np.empty(p.size)
    for i, pi in enumerate(p.reshape(-1)):
        mean, sd = n * pi, np.sqrt(n * pi * (1.0 - pi))
        k = np.arange(max(0, int(mean - 40 * sd) - 40), min(n, int(mean + 40 * sd) + 40) + 1, dtype=np.float64)
        out[i] = (binom.pmf(k, n, pi) * np.log(k + shift)).sum()
    return out.reshape(p.shape)


def count_model_expected_kl(log_d: torch.Tensor, task: Task, n_train: int) -> float:
    """The expected prompt-averaged KL(D || c) of the count model (module docstring) fitted to n_train pairs drawn
    as the pretraining pairs are (q ~ Uniform over the Q prompts, y ~ D(. | q)), exactly. By the chain rule over the
    trie, for each prompt q
        KL(D_q || c_q) = -H(D_q) - sum_{s, x} m_q(s x) log(N(q, s x) + 1) + sum_s m_q(s) log(N(q, s) + K + 1),
    s over the content prefixes with |s| < L, x over the K digits and EOS (_prefix_masses), and every count is
    marginally N(q, s) ~ Binomial(n_train, m_q(s) / Q) (each pair independently has prompt q and a response starting
    with s), so by linearity E KL is a sum of E log(N + c) over binomial pmfs. For counts large at every node it
    tends to the variance term Q * K * S / (2 n_train) (K free conditionals at each of the S nodes of each prompt);
    add-one smoothing lowers it where a node's expected count is small."""
    K, Q = task.modulus, log_d.shape[0]
    mass, child = _prefix_masses(log_d, task)
    d = log_d.exp().double()
    neg_entropy = torch.where(d > 0, d * log_d.double(), torch.zeros_like(d)).sum(1).numpy()
    e_child = _expected_log(n_train, child / Q, 1.0)
    e_node = _expected_log(n_train, mass / Q, float(K + 1))
    per_prompt = neg_entropy - (child * e_child).sum((1, 2)) + (mass * e_node).sum(1)
    return float(per_prompt.mean())


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
