"""Frozen representations and the linear probe (multinomial logistic regression on standardised features)."""

from __future__ import annotations

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from .networks import ContrastiveNet
from .objectives import features


@torch.no_grad()
def embed(net: ContrastiveNet, method: str, x: torch.Tensor, batch: int) -> dict[str, np.ndarray]:
    """{"h": encoder output, "f": the method's features with the gate at its posterior mode, "pi": gate
    keep-probabilities (all ones without a gate)} for images ``x``, in eval mode (BatchNorm running stats)."""
    net.eval()
    out: dict[str, list[torch.Tensor]] = {"h": [], "f": [], "pi": []}
    for chunk in x.split(batch):
        h = net.encoder(chunk)
        z = net.projector(h)
        pi = net.gate(h) if net.gate is not None else torch.ones_like(z)
        for key, value in (("h", h), ("f", features(method, z, pi)), ("pi", pi)):
            out[key].append(value.cpu())
    return {k: torch.cat(v).numpy().astype(np.float64) for k, v in out.items()}


def linear_probe(train: np.ndarray, y_train: np.ndarray, test: np.ndarray, y_test: np.ndarray, c: float,
                 max_iter: int) -> float:
    """Test accuracy of argmax_k (W s(x))_k, W fitted by L2-regularised (C = ``c``) multinomial logistic regression
    (lbfgs) on standardised s(x) of the frozen training features."""
    clf = make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=max_iter))
    clf.fit(train, y_train)
    return float((clf.predict(test) == y_test).mean())
