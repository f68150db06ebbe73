"""Sample-quality metrics in the feature space f(x) of the digit classifier trained here (networks.Classifier).

Frechet distance (Heusel et al. 2017, NeurIPS, with classifier features in place of Inception's):
    FD = ||mu_r - mu_g||^2 + Tr(S_r + S_g - 2 (S_r S_g)^{1/2}).
1-NN two-sample accuracy (Lopez-Paz & Oquab 2017, ICLR): leave-one-out 1-nearest-neighbour classification of the
pooled real and generated features into their origin; 0.5 = indistinguishable, 1.0 = fully separable.
Precision / recall (Kynkaenniemi et al. 2019, NeurIPS): the real (generated) manifold is the union of balls around
each real (generated) feature with radius its distance to the k-th nearest neighbour in its own set; precision is
the fraction of generated points inside the real manifold, recall the fraction of real points inside the generated.
Label distribution: total variation (1/2) sum_c |q_c - p_c| between the classifier-assigned label frequencies q of
the samples and those p of real test images.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy import linalg


def frechet_distance(real: np.ndarray, fake: np.ndarray) -> float:
    """FD between Gaussians fitted to the rows of ``real`` and ``fake`` (see the module)."""
    mu_r, mu_g = real.mean(0), fake.mean(0)
    s_r, s_g = np.cov(real, rowvar=False), np.cov(fake, rowvar=False)
    root = linalg.sqrtm(s_r @ s_g).real
    return float(((mu_r - mu_g) ** 2).sum() + np.trace(s_r + s_g - 2 * root))


def one_nn_accuracy(real: np.ndarray, fake: np.ndarray) -> float:
    """Leave-one-out 1-NN accuracy of telling ``real`` from ``fake`` rows (Euclidean distance)."""
    pooled = torch.as_tensor(np.concatenate([real, fake]), dtype=torch.float64)
    origin = torch.cat([torch.zeros(len(real)), torch.ones(len(fake))])
    d = torch.cdist(pooled, pooled)
    d.fill_diagonal_(float("inf"))
    return float((origin[d.argmin(1)] == origin).float().mean())


def _radii(x: torch.Tensor, k: int) -> torch.Tensor:
    """Distance of each row of x to its k-th nearest other row."""
    return torch.cdist(x, x).topk(k + 1, largest=False).values[:, k]


def precision_recall(real: np.ndarray, fake: np.ndarray, k: int) -> tuple[float, float]:
    """(precision, recall) with k-NN balls (see the module)."""
    r, g = (torch.as_tensor(a, dtype=torch.float64) for a in (real, fake))
    d = torch.cdist(g, r)  # d[i, j] = ||g_i - r_j||
    precision = (d <= _radii(r, k)[None, :]).any(1).float().mean()
    recall = (d.T <= _radii(g, k)[None, :]).any(1).float().mean()
    return float(precision), float(recall)


def label_frequencies(labels: np.ndarray, n_classes: int = 10) -> np.ndarray:
    """q_c = (1/n) #{i : label_i = c}."""
    return np.bincount(labels, minlength=n_classes) / len(labels)


def label_tv(labels: np.ndarray, reference: np.ndarray) -> float:
    """(1/2) sum_c |q_c - p_c| between the label frequencies of ``labels`` and ``reference``."""
    return float(0.5 * np.abs(label_frequencies(labels) - label_frequencies(reference)).sum())


@torch.no_grad()
def featurize(net: torch.nn.Module, X: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """(features f(x) as float64 [n, feat_dim], classifier-assigned labels argmax_c logit_c [n]) of the rows of X."""
    feats = net.features(X)
    return feats.double().cpu().numpy(), net.head(feats).argmax(1).cpu().numpy()


def score(real: tuple[np.ndarray, np.ndarray], fake: tuple[np.ndarray, np.ndarray], k: int) -> dict[str, float]:
    """Every metric of the module for (features, labels) of real and generated images."""
    precision, recall = precision_recall(real[0], fake[0], k)
    return {"fd": frechet_distance(real[0], fake[0]), "one_nn": one_nn_accuracy(real[0], fake[0]),
            "precision": precision, "recall": recall, "label_tv": label_tv(fake[1], real[1])}
