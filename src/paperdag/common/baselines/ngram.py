"""Interpolated modified Kneser-Ney n-gram language models of integer token streams (Chen & Goodman 1998).

Fitted on tokens x_1..x_N over V symbols. For a k-gram g (k <= n, the model's order), c(g) is its count in the stream
and N1+(. g) = #{x : c(x g) > 0} its continuation count (distinct tokens seen before it). The order-k estimate for a
context h of k - 1 tokens (h' = h without its first token) uses the adjusted count a(hw) = c(hw) at the top order
and a(hw) = N1+(. hw) below it:

    p_k(w | h) = (a(hw) - D(a(hw)))^+ / S(h) + gamma(h) p_{k-1}(w | h'),     S(h) = sum_w a(hw),
    gamma(h)   = (D_1 N_1(h.) + D_2 N_2(h.) + D_3+ N_3+(h.)) / S(h),         N_r(h.) = #{w : a(hw) = r} (3+: >= 3),
    p_0(w)     = 1 / V,

and p_k(w | h) = p_{k-1}(w | h') where S(h) = 0 (an unseen context). Each order's three discounts come from the
count-of-counts n_r = #{g : a(g) = r} of its adjusted counts:

    Y = n_1 / (n_1 + 2 n_2),     D_r = r - (r + 1) Y n_{r+1} / n_r     (r = 1, 2, 3+; D(a) = D_min(a, 3)).

Where a count-of-counts is zero (tiny corpora) or some D_r leaves (0, r], the order takes KenLM's fallback discounts
(0.5, 1.0, 1.5). Since 0 < D_r <= r, sum_w (a(hw) - D)^+ = S(h) (1 - gamma(h)): every p_k sums to 1 over the
vocabulary, and every probability is positive.

A context with only its last j < n - 1 tokens known (the start of an evaluation window; -1 marks the missing ones)
is scored by the order-(j + 1) model: raw counts at order j + 1, continuation counts below. The order-k model is the
order-n model truncated (``KneserNey.truncated``): its tables are the same, so one fit serves a ladder of orders.

Storage: a k-gram is the int64 code sum_i g_i V^(k-i) (first token most significant), so the k-grams of one context
are contiguous in sorted order and the context's code is code // V; lookups are ``np.searchsorted``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

FALLBACK_DISCOUNTS = (0.5, 1.0, 1.5)  # KenLM's --discount_fallback default


def discounts(counts: np.ndarray) -> tuple[float, float, float]:
    """(D_1, D_2, D_3+) from the count-of-counts n_1..n_4 of ``counts``; the fallback where undefined or outside."""
    n = np.bincount(np.minimum(counts, 5), minlength=6)[1:5].astype(float)
    if n.min() == 0:
        return FALLBACK_DISCOUNTS
    y = n[0] / (n[0] + 2 * n[1])
    d = tuple(float(r - (r + 1) * y * n[r] / n[r - 1]) for r in (1, 2, 3))
    return d if all(0 < d[r - 1] <= r for r in (1, 2, 3)) else FALLBACK_DISCOUNTS


def _lookup(sorted_codes: np.ndarray, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of each query in ``sorted_codes`` (clipped) and whether it is there."""
    i = np.minimum(np.searchsorted(sorted_codes, query), len(sorted_codes) - 1)
    return i, sorted_codes[i] == query


@dataclass(frozen=True, eq=False)
class _Table:
    """One order's adjusted counts: k-gram codes with (a - D(a))^+, and per context S(h) and gamma(h) S(h)."""

    codes: np.ndarray
    kept: np.ndarray
    contexts: np.ndarray
    totals: np.ndarray
    backoff: np.ndarray
    discounts: tuple[float, float, float]

    @classmethod
    def build(cls, codes: np.ndarray, counts: np.ndarray, vocab: int) -> _Table:
        d = discounts(counts)
        cut = np.asarray(d)[np.minimum(counts, 3) - 1]
        contexts, start = np.unique(codes // vocab, return_index=True)
        totals = np.add.reduceat(counts, start).astype(float)
        return cls(codes, counts - cut, contexts, totals, np.add.reduceat(cut, start), d)

    def prob(self, context: np.ndarray, code: np.ndarray, lower: np.ndarray) -> np.ndarray:
        """p_k(w | h) for context codes h and k-gram codes hw, given p_{k-1}(w | h') in ``lower``."""
        i, hit = _lookup(self.codes, code)
        j, seen = _lookup(self.contexts, context)
        kept = np.where(hit, self.kept[i], 0.0)
        return np.where(seen, (kept + self.backoff[j] * lower) / self.totals[j], lower)


@dataclass(frozen=True, eq=False)
class KneserNey:
    """A fitted model: ``raw[k-1]`` holds the raw counts of order k (1..order), ``cont[k-1]`` the continuation
    counts of order k (1..order-1)."""

    order: int
    vocab: int
    raw: tuple[_Table, ...]
    cont: tuple[_Table, ...]

    @classmethod
    def fit(cls, tokens: np.ndarray, order: int, vocab: int) -> KneserNey:
        """Count every k-gram (k <= order) of ``tokens`` and the continuation counts of every k < order."""
        t = np.asarray(tokens, dtype=np.int64).ravel()
        if order < 1 or vocab < 1 or float(vocab) ** order >= 2.0**62:
            raise ValueError(f"KneserNey needs order >= 1, vocab >= 1 and vocab**order < 2**62, got {order}, {vocab}")
        if len(t) < order or t.min() < 0 or t.max() >= vocab:
            raise ValueError(f"KneserNey needs >= {order} tokens in [0, {vocab}), got {len(t)}")
        raw, cont, code = [], [], t
        for k in range(1, order + 1):
            if k > 1:
                code = code[:-1] * vocab + t[k - 1 :]
            grams, counts = np.unique(code, return_counts=True)
            raw.append(_Table.build(grams, counts, vocab))
            if k > 1:  # N1+(. g) of the (k-1)-grams g: distinct k-grams ending in g
                cont.append(_Table.build(*np.unique(grams % vocab ** (k - 1), return_counts=True), vocab))
        return cls(order, vocab, tuple(raw), tuple(cont))

    def truncated(self, order: int) -> KneserNey:
        """The model of a lower order fitted on the same tokens (shares the tables)."""
        if not 1 <= order <= self.order:
            raise ValueError(f"order must be in 1..{self.order}, got {order}")
        return KneserNey(order, self.vocab, self.raw[:order], self.cont[: order - 1])

    def level_log_probs(self, context: np.ndarray, target: np.ndarray) -> np.ndarray:
        """log p(target | context) of every truncation: row k - 1 is the order-k model's (shape [order, M]).

        ``context`` [M, order - 1]: the preceding tokens, oldest first, -1 where unknown (only the trailing run of
        known tokens counts); ``target`` [M].
        """
        w = np.asarray(target, dtype=np.int64).ravel()
        ctx = np.asarray(context, dtype=np.int64).reshape(len(w), self.order - 1)
        if w.size and (w.min() < 0 or w.max() >= self.vocab or ctx.max(initial=-1) >= self.vocab):
            raise ValueError(f"tokens must lie in [0, {self.vocab}) (context: -1 for unknown)")
        unknown = ctx[:, ::-1] < 0
        known = np.where(unknown.any(axis=1), unknown.argmax(axis=1), self.order - 1)
        h, lower = np.zeros_like(w), np.full(len(w), 1.0 / self.vocab)
        out = np.empty((self.order, len(w)))
        for k in range(1, self.order + 1):
            code = h * self.vocab + w
            top = self.raw[k - 1].prob(h, code, lower)
            out[k - 1] = top if k == 1 else np.where(known >= k - 1, top, out[k - 2])
            if k < self.order:
                lower = self.cont[k - 1].prob(h, code, lower)
                h = np.maximum(ctx[:, -k], 0) * self.vocab ** (k - 1) + h
        return np.log(out)

    def log_probs(self, context: np.ndarray, target: np.ndarray) -> np.ndarray:
        """Natural-log p(target_i | context_i), shape [M] (see ``level_log_probs`` for the layout)."""
        return self.level_log_probs(context, target)[-1]


def window_contexts(x: np.ndarray, length: int) -> np.ndarray:
    """[B, T, length]: for each position t the tokens x[b, t-length+1 .. t], -1 before the window's start."""
    x = np.asarray(x, dtype=np.int64)
    padded = np.concatenate([np.full((x.shape[0], length), -1, dtype=np.int64), x], axis=1)
    return sliding_window_view(padded, length, axis=1)[:, 1:]


def window_level_nll(model: KneserNey, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """-log p(y[b, t] | x[b, :t+1]) of every truncation of ``model``, shape [order, B, T]."""
    x, y = np.asarray(x), np.asarray(y)
    if x.ndim != 2 or x.shape != y.shape:
        raise ValueError(f"windows x and y must both be [B, T], got {x.shape} and {y.shape}")
    ctx = window_contexts(x, model.order - 1).reshape(-1, model.order - 1)
    return -model.level_log_probs(ctx, y.reshape(-1)).reshape(model.order, *y.shape)


def window_nll(model: KneserNey, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-target NLL [B, T] of windows (x, y), y[:, t] following x[:, :t+1]: the context is the last order - 1
    tokens of x[b, :t+1] within the window (shorter near its start), what a model scored on the windows sees."""
    return window_level_nll(model, x, y)[-1]


@dataclass(frozen=True)
class NGramLadder:
    """Kneser-Ney models of several orders: validation NLL (nats/token) per order, the order chosen on it, and each
    order's per-window mean test NLL (shape [B]) for paired intervals over windows."""

    orders: tuple[int, ...]
    valid_nll: dict[int, float]
    chosen: int
    test_nll: dict[int, np.ndarray]

    def names(self) -> dict[int, str]:
        """{order: "KN <order>-gram"}."""
        return {k: f"KN {k}-gram" for k in self.orders}


def kneser_ney_ladder(
    train: np.ndarray,
    valid: tuple[np.ndarray, np.ndarray],
    test: tuple[np.ndarray, np.ndarray],
    vocab: int,
    orders: tuple[int, ...] = (2, 3, 4, 5),
) -> NGramLadder:
    """Fit on the training stream (one fit of the highest order, truncated), choose the order with the lowest mean
    NLL on the validation windows (the lowest order on ties) and score every order on the test windows."""
    orders = tuple(sorted(set(orders)))
    if not orders or orders[0] < 1:
        raise ValueError(f"orders must be positive integers, got {orders}")
    model = KneserNey.fit(train, orders[-1], vocab)
    v, t = window_level_nll(model, *valid), window_level_nll(model, *test)
    valid_nll = {k: float(v[k - 1].mean()) for k in orders}
    test_nll = {k: t[k - 1].mean(axis=1) for k in orders}
    return NGramLadder(orders, valid_nll, min(orders, key=valid_nll.__getitem__), test_nll)
