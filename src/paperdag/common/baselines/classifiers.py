"""k-nearest-neighbour and logistic-regression baselines on the raw (flattened) inputs, each hyper-parameter chosen
on validation (ties: the first in the given order), the chosen model scored per test example.

- ``knn``: the k training points nearest in Euclidean distance ||x - x_i||_2; classification predicts their majority
  label (ties: the smallest label, as scikit-learn), regression their mean target yhat = (1/k) sum_i y_i. k maximises
  validation accuracy, or minimises validation MSE = mean_j ||yhat_j - y_j||^2.
- ``logistic``: multinomial logistic regression p(c | x) = softmax(W z + b)_c on standardised inputs
  z = (x - mu) / sigma (train statistics), fitted by L-BFGS to min_W,b (1/2) ||W||^2 + C sum_i -log p(y_i | x_i);
  C maximises validation accuracy.

``Fitted.test_correct`` is 1/0 per test example for classification and the squared error ||yhat - y||^2 for
regression (floats), so a paper builds intervals over test examples from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import NearestNeighbors
from sklearn.preprocessing import StandardScaler


@dataclass(frozen=True)
class Fitted:
    """A baseline with its validation-chosen hyper-parameter, validation score and per-test-example outcome."""

    name: str
    chosen: dict
    valid_score: float
    test_correct: np.ndarray


def _flat(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x.reshape(len(x), -1)


def _votes(labels: np.ndarray, n_classes: int) -> np.ndarray:
    """The majority label of each row of neighbour labels (ties: the smallest)."""
    rows = np.arange(len(labels))[:, None] * n_classes
    return np.bincount((rows + labels).ravel(), minlength=len(labels) * n_classes).reshape(-1, n_classes).argmax(1)


def knn(
    train_x: np.ndarray,
    train_y: np.ndarray,
    valid_x: np.ndarray,
    valid_y: np.ndarray,
    test_x: np.ndarray,
    test_y: np.ndarray,
    ks: tuple[int, ...] = (1, 3, 5, 9, 15),
    task: Literal["classification", "regression"] = "classification",
) -> Fitted:
    """k-NN on raw inputs, k chosen on validation accuracy (classification) or validation MSE (regression)."""
    if task not in ("classification", "regression"):
        raise ValueError(f"task must be 'classification' or 'regression', got {task!r}")
    if not ks or min(ks) < 1 or max(ks) > len(train_x):
        raise ValueError(f"every k must lie in 1..{len(train_x)} (training points), got {ks}")
    index = NearestNeighbors(n_neighbors=max(ks), algorithm="brute").fit(_flat(train_x))
    if task == "classification":
        classes, codes = np.unique(np.asarray(train_y), return_inverse=True)

        def outcome(y: np.ndarray, k: int, near: np.ndarray) -> np.ndarray:
            return (classes[_votes(codes[near[:, :k]], len(classes))] == np.asarray(y)).astype(float)
    else:
        targets = np.asarray(train_y, dtype=np.float64).reshape(len(train_x), -1)

        def outcome(y: np.ndarray, k: int, near: np.ndarray) -> np.ndarray:
            err = targets[near[:, :k]].mean(axis=1) - np.asarray(y, dtype=np.float64).reshape(len(near), -1)
            return (err**2).sum(axis=1)

    near_valid = index.kneighbors(_flat(valid_x), return_distance=False)
    scores = [float(outcome(valid_y, k, near_valid).mean()) for k in ks]
    best = int(np.argmax(scores) if task == "classification" else np.argmin(scores))
    k = ks[best]
    near_test = index.kneighbors(_flat(test_x), n_neighbors=k, return_distance=False)
    return Fitted(f"{k}-NN (raw inputs)", {"k": k}, scores[best], outcome(test_y, k, near_test))


def logistic(
    train_x: np.ndarray,
    train_y: np.ndarray,
    valid_x: np.ndarray,
    valid_y: np.ndarray,
    test_x: np.ndarray,
    test_y: np.ndarray,
    cs: tuple[float, ...] = (0.01, 0.1, 1.0, 10.0),
) -> Fitted:
    """Multinomial logistic regression on standardised raw inputs, C chosen on validation accuracy."""
    scaler = StandardScaler().fit(_flat(train_x))
    tr, va, te = (scaler.transform(_flat(x)) for x in (train_x, valid_x, test_x))
    models = [LogisticRegression(C=c, max_iter=10_000, random_state=0).fit(tr, train_y) for c in cs]
    scores = [float((m.predict(va) == np.asarray(valid_y)).mean()) for m in models]
    best = int(np.argmax(scores))
    correct = (models[best].predict(te) == np.asarray(test_y)).astype(float)
    return Fitted(f"logistic regression (C={cs[best]:g})", {"C": cs[best]}, scores[best], correct)
