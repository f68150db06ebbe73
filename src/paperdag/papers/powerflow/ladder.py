"""The fine-tuning-utility ladder of the competence preconditions: what the un-tuned base model already gives without
any update, each exactly from its table of response probabilities (exact.log_probs):

- sampled: one response per prompt, exact accuracy sum_y p(y|q) 1[ans(y) = c] (exact.metrics);
- greedy: the response decoded token by token, each step the most probable next token (a digit or EOS; EOS forced
  after L digits) under the prefix's probability P(y_1..y_t, .) = sum over the responses that extend it;
- majority vote of k samples (maj@k, the pseudo-label the majority RLIF baseline trains on, TTRL): the most frequent
  answer among k independent samples wins (a response without an answer casts no vote; a tie is split evenly among
  the tied answers; k answerless samples are wrong); its exact accuracy sums the multinomial probability of every
  count vector of the K + 1 outcomes.

Accuracies are prompt-averaged, as exact.metrics'.
"""

from __future__ import annotations

from itertools import combinations
from math import lgamma

import numpy as np
import torch

from .task import Task, all_responses, response_answers


def greedy_responses(log_pi: torch.Tensor, task: Task) -> list[tuple[int, ...]]:
    """Per prompt, the greedy response's content tokens (ties: the smallest token id, digits before EOS = K)."""
    responses, lengths = all_responses(task)
    p, out = log_pi.exp(), []
    for q in range(p.shape[0]):
        prefix: tuple[int, ...] = ()
        while len(prefix) < task.max_len:
            t = len(prefix)
            extends = (lengths >= t) & (responses[:, :t] == torch.tensor(prefix, dtype=responses.dtype)).all(1)
            mass = [float(p[q, extends & (lengths > t) & (responses[:, t] == d)].sum()) for d in range(task.modulus)]
            mass.append(float(p[q, extends & (lengths == t)].sum()))  # EOS: the response that is exactly the prefix
            best = int(np.argmax(mass))
            if best == task.modulus:
                break
            prefix += (best,)
        out.append(prefix)
    return out


def greedy_accuracy(log_pi: torch.Tensor, task: Task) -> float:
    """Prompt-averaged accuracy of the greedy responses (the answer is the last content token)."""
    answers = task.answers.tolist()
    return float(np.mean([bool(y) and y[-1] == c for y, c in zip(greedy_responses(log_pi, task), answers,
                                                                  strict=True)]))


def answer_probs(log_pi: torch.Tensor, task: Task) -> np.ndarray:
    """(Q, K + 1) P(answer = a | q) for a = 0..K-1 and, last, P(no answer) (the empty response)."""
    responses, lengths = all_responses(task)
    ans = response_answers(responses, lengths)
    ans = torch.where(ans < 0, torch.full_like(ans, task.modulus), ans)
    p = log_pi.exp().double()
    out = torch.zeros(p.shape[0], task.modulus + 1, dtype=torch.float64)
    out.index_add_(1, ans, p)
    return out.numpy()


def count_vectors(k: int, bins: int) -> np.ndarray:
    """Every vector of ``bins`` non-negative counts summing to k (stars and bars)."""
    rows = []
    for bars in combinations(range(k + bins - 1), bins - 1):
        edges = (-1, *bars, k + bins - 1)
        rows.append([edges[i + 1] - edges[i] - 1 for i in range(bins)])
    return np.array(rows)


def majority_accuracy(log_pi: torch.Tensor, task: Task, k: int) -> float:
    """Prompt-averaged exact accuracy of maj@k (module docstring)."""
    probs, K = answer_probs(log_pi, task), task.modulus
    counts = count_vectors(k, K + 1)  # (V, K + 1), the last column the answerless samples
    log_coef = lgamma(k + 1) - np.array([sum(lgamma(c + 1) for c in row) for row in counts])
    votes = counts[:, :K]
    top = votes.max(1, keepdims=True)
    winners = (votes == top) & (top > 0)  # (V, K)
    share = winners / np.maximum(winners.sum(1, keepdims=True), 1)  # each tied answer's chance to be the vote
    accuracy = []
    for q, c in enumerate(task.answers.tolist()):
        with np.errstate(divide="ignore"):
            log_p = np.log(probs[q])
        terms = log_coef + (counts * log_p).sum(1, where=counts > 0)
        accuracy.append(float((np.exp(terms) * share[:, c]).sum()))
    return float(np.mean(accuracy))
