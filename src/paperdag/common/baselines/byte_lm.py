"""The trivial-baseline ladder of a byte-level language model (``../shared/papers.md``), every rung fitted on the
training bytes by counting:

- interpolated modified Kneser-Ney n-grams of orders 2-5 (``paperdag.common.baselines.ngram``), the order chosen on
  held-out validation windows, every order scored on the very windows the models are scored on (history cut to the
  window, as the models see it);
- the Witten-Bell and add-one count bigrams on the same windows (``paperdag.common.ngram``).

The held-out windows are drawn from the validation split the way the scored windows are (``fixed_batches``, another
seed), and every draw that shares a byte position with a scored window is dropped: the order is never chosen on the
bytes it is judged on. Positions come from drawing on ``arange(len(tokens))``: ``fixed_batches``' offsets depend on
the stream's length only, so the same call on the index stream returns the scored windows' positions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperdag.common.baselines.ngram import kneser_ney_ladder
from paperdag.common.corpus import fixed_batches
from paperdag.common.ngram import bigram_cross_entropies
from paperdag.common.tokenizer import VOCAB_SIZE
from paperdag.common.verdicts import Ladder

Windows = tuple[np.ndarray, np.ndarray]  # (x, y), each [B, T]; y[:, t] follows x[:, :t + 1]
DRAWS = 8  # candidate held-out windows drawn per scored one


def window_positions(n: int, batches: int, batch_size: int, context: int, seed: int) -> Windows:
    """Positions (into a stream of length ``n``) of the windows ``fixed_batches`` draws with these arguments."""
    drawn = fixed_batches(np.arange(n, dtype=np.int64), batches, batch_size, context, seed=seed)
    return np.concatenate([x.numpy() for x, _ in drawn]), np.concatenate([y.numpy() for _, y in drawn])


def heldout_windows(tokens: np.ndarray, scored: Windows, batches: int, batch_size: int, context: int,
                    seed: int) -> Windows:
    """As many windows of ``tokens`` as ``scored`` holds (positions), drawn with ``seed``, none sharing a position
    with a scored one."""
    used = np.zeros(len(tokens), dtype=bool)
    used[scored[0]], used[scored[1]] = True, True
    x, y = window_positions(len(tokens), DRAWS * batches, batch_size, context, seed)
    keep = np.flatnonzero(~(used[x].any(axis=1) | used[y].any(axis=1)))[: len(scored[0])]
    if len(keep) < len(scored[0]):
        raise ValueError(f"only {len(keep)} drawn windows miss the {len(scored[0])} scored ones: the validation "
                         "split is too small for held-out windows")
    return tokens[x[keep]], tokens[y[keep]]


@dataclass(frozen=True)
class Baselines:
    """Cross-entropies (nats/byte) of the count models on the models' validation windows: Kneser-Ney by order
    (``chosen``: the order with the lowest loss on the held-out windows, ``heldout`` their losses) and both bigrams."""

    ngram: dict[int, float]
    heldout: dict[int, float]
    chosen: int
    bigram: float
    bigram_add_one: float

    def ladder(self) -> Ladder:
        """The chosen Kneser-Ney order, the orders below it and the Witten-Bell bigram (orders above the chosen one
        lost on the held-out windows and are no rungs)."""
        return Ladder.of("lower", {f"KN {k}-gram": v for k, v in self.ngram.items() if k <= self.chosen}
                         | {"Witten-Bell bigram": self.bigram})

    def metrics(self) -> dict[str, float]:
        """Every rung's loss on the scored windows, the Kneser-Ney losses on the held-out ones, the chosen order."""
        return ({f"kn{k}_val_loss": v for k, v in self.ngram.items()} | {"kn_chosen_order": self.chosen}
                | {f"kn{k}_heldout_loss": v for k, v in self.heldout.items()}
                | {"bigram_witten_bell_val_loss": self.bigram, "bigram_add_one_val_loss": self.bigram_add_one})


def trivial_baselines(train: np.ndarray, val: np.ndarray, batches: int, batch_size: int, context: int, seed: int,
                      heldout_seed: int) -> Baselines:
    """The module docstring's baselines, scored on the windows ``fixed_batches(val, batches, batch_size, context,
    seed)`` (the models' validation windows), the order chosen on held-out windows drawn with ``heldout_seed``."""
    x, y = window_positions(len(val), batches, batch_size, context, seed)
    kn = kneser_ney_ladder(train, heldout_windows(val, (x, y), batches, batch_size, context, heldout_seed),
                           (val[x], val[y]), VOCAB_SIZE)
    bigram = bigram_cross_entropies(train, val[x].ravel(), val[y].ravel())
    return Baselines({k: float(v.mean()) for k, v in kn.test_nll.items()}, kn.valid_nll, kn.chosen,
                     bigram["witten_bell"], bigram["add_one"])
