"""Count bigram models of a byte sequence: the lowest rungs of a byte-level language model's trivial-baseline ladder
(the strongest rung is the Kneser-Ney n-gram of order 2-5 chosen on validation, ``common.baselines.ngram``).

Fitted on the training bytes x_1..x_N by counting, with c(a, b) = #{t : x_t = a, x_{t+1} = b}, c(a) = sum_b c(a, b),
T(a) = #{b : c(a, b) > 0} (distinct bytes seen after a) and V = 256 byte values:

    unigram (add-one)               p_1(b)     = (#{t : x_t = b} + 1) / (N + V)
    bigram, add-one (Laplace)       p_+(b | a) = (c(a, b) + 1) / (c(a) + V)
    bigram, interpolated            p_WB(b | a) = (c(a, b) + T(a) p_1(b)) / (c(a) + T(a))   (Witten-Bell; p_1(b)
                                                                                         where c(a) = 0)

Witten-Bell interpolation has no free weight (nothing is tuned on the validation bytes). A model is evaluated by its
cross-entropy in nats per byte over (context byte, next byte) pairs (prev_i, next_i), i = 1..M:

    H = -(1/M) sum_i log p(next_i | prev_i).

For a language model evaluated on windows (x, y) with y the next bytes of x, the pairs are (x_t, y_t): the bigram is
scored on exactly the targets the model is scored on.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch

from paperdag.common.tokenizer import VOCAB_SIZE

Smoothing = Literal["add_one", "witten_bell"]
SMOOTHINGS: tuple[Smoothing, ...] = ("add_one", "witten_bell")


def pair_counts(tokens: np.ndarray, vocab: int = VOCAB_SIZE) -> np.ndarray:
    """c[a, b]: how often byte b follows byte a in ``tokens`` (int64, shape vocab x vocab)."""
    t = np.asarray(tokens, dtype=np.int64)
    return np.bincount(t[:-1] * vocab + t[1:], minlength=vocab * vocab).reshape(vocab, vocab)


def unigram_probs(tokens: np.ndarray, vocab: int = VOCAB_SIZE) -> np.ndarray:
    """p_1(b) = (count(b) + 1) / (N + V)."""
    counts = np.bincount(np.asarray(tokens, dtype=np.int64), minlength=vocab) + 1.0
    return counts / counts.sum()


def bigram_log_probs(tokens: np.ndarray, smoothing: Smoothing, vocab: int = VOCAB_SIZE) -> np.ndarray:
    """log p(b | a) of the bigram fitted on ``tokens`` (rows a, columns b; every row sums to 1)."""
    c = pair_counts(tokens, vocab).astype(float)
    row = c.sum(axis=1, keepdims=True)
    if smoothing == "add_one":
        return np.log((c + 1.0) / (row + vocab))
    if smoothing == "witten_bell":
        types = (c > 0).sum(axis=1, keepdims=True).astype(float)
        p1 = unigram_probs(tokens, vocab)[None, :]
        seen = row > 0
        p = np.where(seen, (c + types * p1) / np.where(seen, row + types, 1.0), p1)
        return np.log(p)
    raise ValueError(f"smoothing must be one of {SMOOTHINGS}, got {smoothing!r}")


def cross_entropy(log_p: np.ndarray, prev: np.ndarray, nxt: np.ndarray) -> float:
    """H = -mean_i log_p[prev_i, next_i] (nats per byte)."""
    prev, nxt = np.asarray(prev, dtype=np.int64).ravel(), np.asarray(nxt, dtype=np.int64).ravel()
    if prev.shape != nxt.shape or prev.size == 0:
        raise ValueError(f"cross_entropy needs equally many context and next bytes, got {prev.size} and {nxt.size}")
    return float(-log_p[prev, nxt].mean())


def window_pairs(batches: list[tuple[torch.Tensor, torch.Tensor]]) -> tuple[np.ndarray, np.ndarray]:
    """The (x_t, y_t) pairs of language-model batches (x, y): every target with the byte just before it."""
    prev = np.concatenate([x.reshape(-1).numpy() for x, _ in batches])
    nxt = np.concatenate([y.reshape(-1).numpy() for _, y in batches])
    return prev, nxt


def bigram_cross_entropies(train: np.ndarray, prev: np.ndarray, nxt: np.ndarray) -> dict[Smoothing, float]:
    """The cross-entropy (nats per byte) of both bigrams fitted on ``train``, on the pairs (prev, nxt)."""
    return {s: cross_entropy(bigram_log_probs(train, s), prev, nxt) for s in SMOOTHINGS}
