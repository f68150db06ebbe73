"""The enumerable reasoning task: prompts q = (a, b) over Z_K, answer c = (a + b) mod K, responses of at most L
content tokens (digits 0..K-1) followed by EOS, so every response can be listed (sum_{k<=L} K^k of them).

Token ids: digits 0..K-1, EOS = K, SEP = K + 1; a model reads [a, b, SEP, y_1, ..., y_L].
The answer of a response is its last content token (an empty response has none and is wrong).

The base model's pretraining distribution D(y | q) is a per-prompt mixture (weights w ~ Dirichlet(kappa * mix)):
    chain  (correct, long):  [a, b, c] or [b, a, c], each 1/2            (one path when a = b)
    guess  (short):          [g], g = m = c + 1 mod K w.p. beta, else g ~ Uniform(Z_K)
    noise  (any length):     l ~ Uniform{0..L}, digits ~ Uniform(Z_K)
so D is imperfect (wrong short guesses, noisy traces) and length-diverse. There, length and correctness go together
(the correct traces are the length-3 ones), so any sharpening lengthens.

The ``lengths`` variant separates them: correct answers come at every length and the per-token density does not
depend on the length. A response has k ~ Uniform{1..L} content tokens, k - 1 uniform work digits, then an answer
drawn from the same three kinds (chain: c; guess: g as above; noise: uniform), independently of k:
    D_len(y | q) = (1/L) K^{-(k-1)} A_q(ans(y)),   A_q(a) = w_chain 1[a = c] + w_guess P_guess(a) + w_noise / K,
so log D_len is linear in k with the same slope -log K for every answer, and P(correct | k) is the same at every k.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class Task:
    """Modulus K, maximum content length L, the per-prompt mixture weights (Q, 3) = (chain, guess, noise) and the
    variant of D (``chain`` or ``lengths``, module docstring)."""

    modulus: int
    max_len: int
    guess_bias: float
    weights: np.ndarray
    variant: str = "chain"

    @property
    def eos(self) -> int:
        return self.modulus

    @property
    def sep(self) -> int:
        return self.modulus + 1

    @property
    def vocab(self) -> int:
        return self.modulus + 2

    @property
    def prompts(self) -> torch.Tensor:
        """(Q, 2) = all (a, b) in Z_K^2, row-major."""
        k = torch.arange(self.modulus)
        return torch.cartesian_prod(k, k)

    @property
    def answers(self) -> torch.Tensor:
        """(Q,) c = (a + b) mod K."""
        return self.prompts.sum(1) % self.modulus


def draw_weights(rng: np.random.Generator, n_prompts: int, mix: list[float], concentration: float) -> np.ndarray:
    """(Q, 3) mixture weights w_q ~ Dirichlet(concentration * mix)."""
    return rng.dirichlet(concentration * np.asarray(mix), size=n_prompts)


def _guess(rng: np.random.Generator, task: Task, c: int) -> int:
    """g = c + 1 mod K w.p. beta, else uniform."""
    return (c + 1) % task.modulus if rng.random() < task.guess_bias else int(rng.integers(task.modulus))


def sample_response(rng: np.random.Generator, task: Task, q: int) -> list[int]:
    """One response (content tokens, no EOS) of prompt q drawn from D(. | q) (or D_len for the lengths variant)."""
    a, b = task.prompts[q].tolist()
    c, K = (a + b) % task.modulus, task.modulus
    kind = rng.choice(3, p=task.weights[q])
    if task.variant == "lengths":
        work = rng.integers(K, size=int(rng.integers(1, task.max_len + 1)) - 1).tolist()
        return work + [c if kind == 0 else _guess(rng, task, c) if kind == 1 else int(rng.integers(K))]
    if kind == 0:
        return [a, b, c] if rng.random() < 0.5 else [b, a, c]
    if kind == 1:
        return [_guess(rng, task, c)]
    return rng.integers(K, size=int(rng.integers(task.max_len + 1))).tolist()


def all_responses(task: Task) -> tuple[torch.Tensor, torch.Tensor]:
    """Every response: (R, L) content digits padded with 0 after the end, and (R,) content lengths, ordered by
    length then lexicographically (index of a length-k prefix p among full sequences: sum_i p_i K^(L-1-i))."""
    K, L = task.modulus, task.max_len
    rows, lengths = [], []
    for k in range(L + 1):
        grid = torch.cartesian_prod(*[torch.arange(K)] * k).reshape(-1, k) if k else torch.zeros(1, 0, dtype=torch.long)
        rows.append(torch.cat([grid, torch.zeros(len(grid), L - k, dtype=torch.long)], 1))
        lengths.append(torch.full((len(grid),), k))
    return torch.cat(rows), torch.cat(lengths)


def response_index(responses: torch.Tensor, lengths: torch.Tensor, modulus: int) -> torch.Tensor:
    """(N,) row of each response in all_responses: sum_{j<k} K^j shorter ones, then its k digits read in base K."""
    L = responses.shape[1]
    offset = torch.tensor([sum(modulus**j for j in range(k)) for k in range(L + 1)], device=responses.device)
    t = torch.arange(L, device=responses.device)
    place = (modulus ** (lengths.unsqueeze(1) - 1 - t).clamp(min=0)) * (t < lengths.unsqueeze(1))
    return offset[lengths] + (responses * place).sum(1)


def response_answers(responses: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """(N,) the last content token of each response, -1 for the empty response."""
    last = responses.gather(1, (lengths - 1).clamp(min=0).unsqueeze(1)).squeeze(1)
    return torch.where(lengths > 0, last, torch.full_like(last, -1))


def _guess_probs(task: Task, c: int) -> torch.Tensor:
    """(K,) P_guess(a): beta on c + 1, the rest uniform."""
    guess = torch.full((task.modulus,), (1 - task.guess_bias) / task.modulus, dtype=torch.float64)
    guess[(c + 1) % task.modulus] += task.guess_bias
    return guess


def data_log_probs(task: Task) -> torch.Tensor:
    """(Q, R) exact log D(y | q) of every response under the mixture above (float64; D_len for ``lengths``)."""
    responses, lengths = all_responses(task)
    K, L = task.modulus, task.max_len
    Q = len(task.prompts)
    probs = torch.zeros(Q, len(lengths), dtype=torch.float64)
    w = torch.as_tensor(task.weights, dtype=torch.float64)
    ans = response_answers(responses, lengths)
    if task.variant == "lengths":
        answered = lengths > 0
        for q, c in enumerate(task.answers.tolist()):
            answer = w[q, 0] * (torch.arange(K) == c) + w[q, 1] * _guess_probs(task, c) + w[q, 2] / K
            probs[q, answered] = answer[ans[answered]] / L * float(K) ** -(lengths[answered] - 1).double()
        return probs.log()
    probs += w[:, 2:3] / (L + 1) * float(K) ** -lengths.double()
    one = lengths == 1
    for q, (a, b) in enumerate(task.prompts.tolist()):
        c = (a + b) % K
        probs[q, one] += w[q, 1] * _guess_probs(task, c)[ans[one]]
        for path in {(a, b, c), (b, a, c)}:
            hit = (lengths == 3) & (responses[:, :3] == torch.tensor(path)).all(1)
            probs[q, hit] += w[q, 0] / (2 if a != b else 1)
    return probs.log()
