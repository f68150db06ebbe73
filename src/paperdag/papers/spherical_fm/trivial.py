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


def gaussian_mixture(train: np.ndarray, candidates: list[int], n: int, seed: int) -> tuple[np.ndarray, int]:
    """(n draws, the component count) of a Gaussian mixture with full covariances fitted by seeded EM (scikit-learn's
    GaussianMixture, reg_covar 1e-6 as the Gaussian rung's jitter): the count among ``candidates`` with the highest
    mean log-likelihood of the last fifth of ``train`` when fitted on the rest, then refitted on all of ``train``."""
    from sklearn.mixture import GaussianMixture

    def fit(x: np.ndarray, k: int) -> GaussianMixture:
        return GaussianMixture(k, covariance_type="full", reg_covar=1e-6, random_state=seed).fit(x)

    cut = len(train) - len(train) // 5
    k = max(candidates, key=lambda c: fit(train[:cut], c).score(train[cut:]))
    return fit(train, k).sample(n)[0], k
