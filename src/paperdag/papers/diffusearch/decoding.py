"""Decoders as coroutines, and one driver that batches their model calls across tasks.

A decoder is a generator that yields token rows (r, L) it needs scored and receives their answer-region
log-probabilities (r, A, |W|) over the answer alphabet W (digits, letters, ``=``); it returns a ``Decoded``. Each
decoder memoises its own calls and counts the distinct rows it asked for: its cost in forward passes (one per
sequence scored). The driver additionally shares scores between decoders of the same task, which saves time but
not counted cost.

Baselines (x = prompt + answer region, [M] = mask):
    AR greedy:           x_{s+j} = argmax_w log p_AR(w | x_{<s+j}),  j = 0..A-1
    MDM confidence:      all A answer tokens masked; each step unmask i* = argmax_{i masked} max_w p(w | x)
                         with its argmax (Chang et al. 2022; Nie et al. 2025)
    plan-and-infill:     the plan (variable names, ``=``) is copied from the prompt, the S = K + 1 value slots are
                         masked and infilled one per step in a fixed policy's order: left-to-right, confidence
                         (the most confident unfilled slot), or a random permutation
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field

import numpy as np

from paperdag.common.masked_diffusion import MASK_ID
from paperdag.common.tokenizer import encode

ALPHABET = encode("0123456789abcdefghijklmnopqrstuvwxyz=").astype(np.int64)
ALPHABET_INDEX = np.full(256, -1, dtype=np.int64)
ALPHABET_INDEX[ALPHABET] = np.arange(len(ALPHABET))
AR_FILLER = int(encode("_")[0])  # what an AR row holds after the position being decoded (never attended to)
Scores = np.ndarray  # (r, A, |W|) log-probabilities
Predict = Callable[[np.ndarray], Scores]


@dataclass
class Decoded:
    """Final tokens, the order the slots were committed in, and the forward passes spent."""

    tokens: np.ndarray
    order: list[int]
    forwards: int


@dataclass
class Oracle:
    """A decoder's memoised access to the model: ``scores = yield from oracle.score(rows)``."""

    memo: dict[bytes, np.ndarray] = field(default_factory=dict)
    forwards: int = 0

    def score(self, rows: np.ndarray) -> Generator[np.ndarray, Scores, Scores]:
        """Scores of ``rows``; only rows never scored before are yielded (and counted)."""
        keys = [r.tobytes() for r in rows]
        missing = list(dict.fromkeys(k for k in keys if k not in self.memo))
        if missing:
            fresh = yield np.stack([np.frombuffer(k, dtype=rows.dtype) for k in missing])
            self.memo.update(zip(missing, fresh, strict=True))
            self.forwards += len(missing)
        return np.stack([self.memo[k] for k in keys])


Decoder = Generator[np.ndarray, Scores, Decoded]


def slot_choice(scores: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(confidence max_w p(w), argmax token id) at each answer-relative position."""
    sub = scores[positions]
    return np.exp(sub.max(axis=-1)), ALPHABET[sub.argmax(axis=-1)]


def masked_start(x: np.ndarray, answer_start: int, positions: np.ndarray) -> np.ndarray:
    """A copy of ``x`` with the given answer-relative positions replaced by [MASK]."""
    out = x.copy()
    out[answer_start + positions] = MASK_ID
    return out


def ar_greedy(x: np.ndarray, answer_start: int) -> Decoder:
    """Left-to-right greedy decoding of the whole answer region with the AR model."""
    oracle, y = Oracle(), x.copy()
    a = len(x) - answer_start
    y[answer_start:] = AR_FILLER
    for j in range(a):
        scores = (yield from oracle.score(y[None]))[0]
        y[answer_start + j] = ALPHABET[scores[j].argmax()]
    return Decoded(y, list(range(a)), oracle.forwards)


def mdm_confidence(x: np.ndarray, answer_start: int) -> Decoder:
    """Confidence-ordered unmasking of the whole (fully masked) answer region, one token per step."""
    a = len(x) - answer_start
    oracle, y, todo = Oracle(), masked_start(x, answer_start, np.arange(a)), list(range(a))
    order = []
    while todo:
        scores = (yield from oracle.score(y[None]))[0]
        conf, tok = slot_choice(scores, np.array(todo))
        i = int(np.argmax(conf))
        y[answer_start + todo[i]] = tok[i]
        order.append(todo.pop(i))
    return Decoded(y, order, oracle.forwards)


def plan_infill(x: np.ndarray, answer_start: int, slots: np.ndarray, policy: str, rng: np.random.Generator) -> Decoder:
    """Plan-and-infill with a fixed slot policy: "l2r", "confidence" or "random" (see the module docstring)."""
    oracle, y = Oracle(), masked_start(x, answer_start, slots)
    todo = list(range(len(slots)))
    perm = list(rng.permutation(len(slots))) if policy == "random" else []
    order = []
    while todo:
        scores = (yield from oracle.score(y[None]))[0]
        conf, tok = slot_choice(scores, slots[todo])
        if policy == "l2r":
            i = 0
        elif policy == "confidence":
            i = int(np.argmax(conf))
        elif policy == "random":
            i = todo.index(perm.pop(0))
        else:
            raise ValueError(f"unknown slot policy {policy!r}")
        y[answer_start + slots[todo[i]]] = tok[i]
        order.append(todo.pop(i))
    return Decoded(y, order, oracle.forwards)


def drive(decoders: list[Decoder], predict: Predict, chunk: int) -> list[Decoded]:
    """Run all ``decoders`` to completion in lock step: each round, score every pending row (deduplicated, in
    batches of ``chunk``) with ``predict`` and send each decoder its rows' scores."""
    shared: dict[bytes, np.ndarray] = {}
    done: list[Decoded | None] = [None] * len(decoders)
    pending: dict[int, np.ndarray] = {}

    def advance(i: int, reply: Scores | None) -> None:
        try:
            pending[i] = decoders[i].send(reply)  # type: ignore[arg-type]
        except StopIteration as stop:
            done[i] = stop.value
            pending.pop(i, None)

    for i in range(len(decoders)):
        advance(i, None)
    while pending:
        new = {r.tobytes(): r for rows in pending.values() for r in rows if r.tobytes() not in shared}
        keys = list(new)
        for lo in range(0, len(keys), chunk):
            batch = np.stack([new[k] for k in keys[lo: lo + chunk]])
            shared.update(zip(keys[lo: lo + chunk], predict(batch), strict=True))
        for i, rows in list(pending.items()):
            advance(i, np.stack([shared[r.tobytes()] for r in rows]))
    return [d for d in done if d is not None]
