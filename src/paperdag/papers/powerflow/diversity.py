"""The ``diverse`` task variant (its stages: diverse.py): several correct responses per prompt, where alpha < 1 can
raise quality together with diversity and where supervised GRPO collapses onto one correct response.

Prompts q = (a, b) over Z_K as in task.py (same tokens, the answer is the last content token). D_div(y | q) is a
per-prompt mixture (weights w_q ~ Dirichlet(concentration * mix)) of
    chain  (correct, several):  uniform over the distinct traces T_q = {[c], [a, c], [b, c], [a, b, c], [b, a, c]}
                                (both operand orders, three trace lengths; fewer when a = b or digits coincide)
    guess  (short, confident):  [g], g = c + 1 mod K w.p. beta, else g ~ Uniform(Z_K)
    noise  (any length):        l ~ Uniform{0..L}, digits ~ Uniform(Z_K)
so the correct mass is spread over up to five responses while most of the wrong mass sits on one confident short
guess: p^alpha with alpha < 1 lifts the many small correct responses more than the one large wrong one, so the
alpha-power target can be more accurate than its start and more diverse among its correct responses.

Quality is P(correct | q) and diversity the entropy (nats) of pi(y | q, correct) = pi(y | q) 1[ans(y) = c] /
P(correct | q), both averaged over prompts; every number is exact (enumeration of the (Q, R) response table).
"""

from __future__ import annotations

import numpy as np
import torch

from . import exact
from .task import Task, all_responses, response_answers


def traces(a: int, b: int, modulus: int) -> list[tuple[int, ...]]:
    """The distinct correct traces T_q of prompt (a, b), in a fixed order (module docstring)."""
    c = (a + b) % modulus
    out: list[tuple[int, ...]] = []
    for t in ((c,), (a, c), (b, c), (a, b, c), (b, a, c)):
        if t not in out:
            out.append(t)
    return out


def sample_response(rng: np.random.Generator, task: Task, q: int) -> list[int]:
    """One response (content tokens) of prompt q drawn from D_div(. | q)."""
    a, b = task.prompts[q].tolist()
    c, K = (a + b) % task.modulus, task.modulus
    kind = rng.choice(3, p=task.weights[q])
    if kind == 0:
        options = traces(a, b, K)
        return list(options[int(rng.integers(len(options)))])
    if kind == 1:
        return [(c + 1) % K if rng.random() < task.guess_bias else int(rng.integers(K))]
    return rng.integers(K, size=int(rng.integers(task.max_len + 1))).tolist()


def data_log_probs(task: Task) -> torch.Tensor:
    """(Q, R) exact log D_div(y | q) of every response (float64)."""
    responses, lengths = all_responses(task)
    K, L = task.modulus, task.max_len
    w = torch.as_tensor(task.weights, dtype=torch.float64)
    probs = w[:, 2:3] / (L + 1) * float(K) ** -lengths.double().unsqueeze(0).expand(len(w), -1)
    probs = probs.clone()
    rows = {tuple(r[:k]): j for j, (r, k) in enumerate(zip(responses.tolist(), lengths.tolist(), strict=True))}
    for q, (a, b) in enumerate(task.prompts.tolist()):
        c = (a + b) % K
        for g in range(K):
            probs[q, rows[(g,)]] += w[q, 1] * ((1 - task.guess_bias) / K + task.guess_bias * (g == (c + 1) % K))
        options = traces(a, b, K)
        for t in options:
            probs[q, rows[t]] += w[q, 0] / len(options)
    return probs.log()


def point(log_pi: torch.Tensor, task: Task) -> dict[str, float]:
    """Exact quality (P(correct)) and diversity (entropy among correct responses), prompt-averaged, beside
    exact.metrics' accuracy, entropy and length. log 0 (-inf) is read as a zero probability."""
    responses, lengths = all_responses(task)
    correct = response_answers(responses, lengths).unsqueeze(0) == task.answers.unsqueeze(1)
    log_pi = log_pi.clamp(min=-1e4)
    log_c = torch.where(correct, log_pi, torch.full_like(log_pi, -1e4))
    log_cond = log_c - torch.logsumexp(log_c, dim=1, keepdim=True)
    p_cond = torch.where(correct, log_cond.exp(), torch.zeros_like(log_cond))
    diversity = -(p_cond * torch.where(correct, log_cond, torch.zeros_like(log_cond))).sum(1)
    return exact.metrics(log_pi, task) | {"quality": float((log_pi.exp() * correct).sum(1).mean()),
                                          "diversity": float(diversity.mean())}


def anchor(log_p: torch.Tensor, task: Task, alpha: float) -> dict[str, dict[str, float]]:
    """The exact (quality, diversity) point of a start distribution p and of its alpha-power target p^alpha."""
    log_p = log_p.clamp(min=-1e4)
    return {"start": point(log_p, task), "target": point(exact.normalise(alpha * log_p), task)}
