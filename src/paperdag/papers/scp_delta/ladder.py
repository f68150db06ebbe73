"""The trivial rungs of scp_delta's byte language models (``../shared/papers.md``), each fitted by counting on the
bytes the model it stands beside was trained on, and scored on the very windows that model is scored on:

- interpolated modified Kneser-Ney n-grams (``paperdag.common.baselines.ngram``) of several orders, the order chosen
  on validation windows the rung is never scored on (windows of held-out public records: the private templates, other
  names), the context cut to the window as the transformer sees it;
- the count byte bigram (add-one or Witten-Bell, the better; ``paperdag.common.ngram``).

A rung's value on a seed is its mean NLL (nats/byte) over every target of that seed's held-out windows, the mean the
models' ``mean_nll`` takes (every window has the same length, so the mean of the per-window means).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperdag.common.baselines.ngram import kneser_ney_ladder
from paperdag.common.ngram import bigram_cross_entropies
from paperdag.common.tokenizer import VOCAB_SIZE


def split_windows(windows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of windows (B, T + 1): y[:, t] = windows[:, t + 1] follows x[:, :t + 1]."""
    return windows[:, :-1], windows[:, 1:]


@dataclass(frozen=True)
class CountRungs:
    """Per-seed NLL (nats/byte) of every Kneser-Ney order (``kn``: order -> [n_seeds]), the order chosen on the
    validation windows (``chosen``: one per seed when each seed has its own training bytes) and the count bigram."""

    kn: dict[int, np.ndarray]
    chosen: np.ndarray
    bigram: np.ndarray

    def chosen_nll(self) -> np.ndarray:
        """Per seed, the NLL of the order chosen on validation (the rung in its published form)."""
        return np.array([self.kn[int(k)][s] for s, k in enumerate(self.chosen)])

    def rungs(self, corpus: str) -> dict[str, np.ndarray]:
        """The published rungs: every Kneser-Ney order up to the largest one chosen on validation (an order above it
        lost there) and the count bigram, named after the ``corpus`` they were counted on."""
        top = int(self.chosen.max())
        return ({f"KN {k}-gram of {corpus}": v for k, v in self.kn.items() if k <= top}
                | {f"count bigram of {corpus}": self.bigram})


def bigram_nll(train: np.ndarray, windows: np.ndarray) -> float:
    """The better count bigram of ``train`` (add-one or Witten-Bell) on the next-byte pairs of windows (B, T + 1)."""
    return min(bigram_cross_entropies(train, windows[:, :-1], windows[:, 1:]).values())


def per_seed_rungs(train: list[np.ndarray], valid: np.ndarray, test: list[np.ndarray],
                   orders: tuple[int, ...]) -> CountRungs:
    """Seed s: the count models of ``train[s]`` (the order chosen on ``valid``) scored on ``test[s]``; windows are
    (B, T + 1) byte arrays."""
    fits = [kneser_ney_ladder(t, split_windows(valid), split_windows(w), VOCAB_SIZE, orders)
            for t, w in zip(train, test, strict=True)]
    return CountRungs({k: np.array([float(f.test_nll[k].mean()) for f in fits]) for k in fits[0].orders},
                      np.array([f.chosen for f in fits]),
                      np.array([bigram_nll(t, w) for t, w in zip(train, test, strict=True)]))


def shared_rungs(train: np.ndarray, valid: np.ndarray, test: list[np.ndarray], orders: tuple[int, ...]) -> CountRungs:
    """The count models of one training stream (one fit, one order chosen on ``valid``) scored on each seed's
    ``test[s]`` windows."""
    sizes = [len(w) for w in test]
    fit = kneser_ney_ladder(train, split_windows(valid), split_windows(np.concatenate(test)), VOCAB_SIZE, orders)
    cut = np.cumsum(sizes)[:-1]
    kn = {k: np.array([float(part.mean()) for part in np.split(v, cut)]) for k, v in fit.test_nll.items()}
    return CountRungs(kn, np.full(len(test), fit.chosen), np.array([bigram_nll(train, w) for w in test]))
