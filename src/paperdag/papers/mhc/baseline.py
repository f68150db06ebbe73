"""The trivial baseline every language model must beat: a unigram byte model fitted on the training bytes,

    p(b) = (count_train(b) + 1) / (N_train + 256)   (add-one smoothing),   H = -(1/N_val) sum_t log p(val_t)  nats.
"""

from __future__ import annotations

import numpy as np

from paperdag.common.tokenizer import VOCAB_SIZE


def unigram_cross_entropy(train: np.ndarray, val: np.ndarray) -> float:
    """Cross-entropy (nats per byte) of ``val`` under the add-one smoothed unigram distribution of ``train``."""
    counts = np.bincount(train, minlength=VOCAB_SIZE).astype(float) + 1.0
    log_p = np.log(counts / counts.sum())
    return float(-log_p[val].mean())
