"""The trivial classifiers of a dataset's labels: the ladder the observation's probes and the metric's feature
classifier are judged against (``../shared/papers.md``: classifiers, k-NN and logistic regression on the raw inputs;
beside them the most frequent label, chance).

k and C are chosen on the last ``VALID_FRAC`` of the training split and the chosen model is fitted on the rest
(paperdag.common.baselines.classifiers); each is scored right / wrong per test image, the unit of the intervals
that compare it with a trained classifier on the same images.
"""

from __future__ import annotations

import numpy as np

from paperdag.common.baselines.classifiers import knn, logistic

VALID_FRAC = 0.2  # the last fifth of the training split chooses k and C


def trivial_classifiers(X_tr: np.ndarray, y_tr: np.ndarray, X_te: np.ndarray,
                        y_te: np.ndarray) -> dict[str, np.ndarray]:
    """{name: 1 / 0 per test image} of k-NN and logistic regression on the raw pixels and of the most frequent test
    label."""
    fit = round(len(X_tr) * (1 - VALID_FRAC))
    split = (X_tr[:fit], y_tr[:fit], X_tr[fit:], y_tr[fit:], X_te, y_te)
    found = {f.name: f.test_correct for f in (knn(*split), logistic(*split))}
    return found | {"the most frequent label": (y_te == np.bincount(y_te).argmax()).astype(float)}
