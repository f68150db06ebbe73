"""Contact-based residue classifier: amino-acid type of each peptide position from its backbone environment.

Features use only distances, so a design and its mirror image get the same sequence (the hand is set by the
backbone's geometry, the residue types by contacts).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
import torch
from torch import nn

from .batches import position_features
from .data import AA1
from .params import SeqHeadParams

N_FEAT = 20 + 4 + 1 + 5 + 2
HIDDEN = 64
BATCH = 256
WEIGHT_DECAY = 1e-4


def contact_features(pep: np.ndarray, pocket: np.ndarray, pocket_aa: np.ndarray, contact_dist: float) -> np.ndarray:
    """Per peptide residue [L, 32]: pocket CB counts by residue type within contact_dist of its CB (20), pocket
    CB counts within 6/8/10/12 A (4), peptide CBs within 8 A (1), position features (5), |CA_i-1 - CA_i+1| and
    |CA_i-2 - CA_i+2| / 10 (2, zero at the ends)."""
    L = len(pep)
    d = np.linalg.norm(pep[:, None, 3] - pocket[None, :, 3], axis=-1)
    by_type = np.stack([(d < contact_dist)[:, pocket_aa == a].sum(1) for a in range(20)], 1) / 4.0
    shells = np.stack([(d < r).sum(1) for r in (6.0, 8.0, 10.0, 12.0)], 1) / 10.0
    dp = np.linalg.norm(pep[:, None, 3] - pep[None, :, 3], axis=-1)
    self_n = ((dp < 8.0).sum(1) - 1)[:, None] / 4.0
    ca = pep[:, 1]
    span = np.zeros((L, 2))
    for k, w in enumerate((1, 2)):
        if L > 2 * w:
            span[w:L - w, k] = np.linalg.norm(ca[2 * w:] - ca[: L - 2 * w], axis=-1) / 10.0
    return np.concatenate([by_type, shells, self_n, position_features(L)[:L], span], 1).astype(np.float32)


def make_classifier() -> nn.Module:
    """MLP 32 -> 64 -> 64 -> 20 logits."""
    return nn.Sequential(nn.Linear(N_FEAT, HIDDEN), nn.SiLU(), nn.Linear(HIDDEN, HIDDEN), nn.SiLU(),
                         nn.Linear(HIDDEN, 20))


def rows_to_xy(rows: list[dict], contact_dist: float) -> tuple[np.ndarray, np.ndarray]:
    """Features and native residue indices of every peptide residue in ``rows``."""
    xs, ys = [], []
    for r in rows:
        pep = np.asarray(r["pep_xyz"]).reshape(-1, 4, 3)
        pocket = np.asarray(r["pocket_xyz"]).reshape(-1, 4, 3)
        xs.append(contact_features(pep, pocket, np.asarray(r["pocket_aa"]), contact_dist))
        ys.append([AA1.index(c) for c in r["pep_seq"]])
    return np.concatenate(xs), np.concatenate(ys)


def fit_classifier(x: np.ndarray, y: np.ndarray, p: SeqHeadParams, rng: np.random.Generator, device: str,
                   log: Callable[[str, float, int], None], progress: Callable[[Iterable[int]], Iterable[int]]
                   ) -> nn.Module:
    """Adam (weight decay 1e-4) on the cross-entropy -mean_i log softmax(net(x_i))[y_i] over minibatches of 256
    residues drawn with replacement; logs the minibatch loss as ``seq_loss`` every 20 steps."""
    net = make_classifier().to(device)
    opt = torch.optim.Adam(net.parameters(), lr=p.lr, weight_decay=WEIGHT_DECAY)
    X, Y = torch.as_tensor(x, device=device), torch.as_tensor(y, device=device)
    for step in progress(range(p.steps)):
        idx = torch.as_tensor(rng.integers(len(X), size=BATCH), device=device)
        loss = nn.functional.cross_entropy(net(X[idx]), Y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 20 == 0:
            log("seq_loss", loss.item(), step)
    return net


def accuracy(net: nn.Module, x: np.ndarray, y: np.ndarray, device: str) -> float:
    """Fraction of residues whose argmax class is the native one: mean_i [argmax net(x_i) = y_i]."""
    with torch.no_grad():
        return float((net(torch.as_tensor(x, device=device)).argmax(1).cpu().numpy() == y).mean())
