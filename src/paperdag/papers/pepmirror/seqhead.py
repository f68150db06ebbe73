"""Sequence head: the amino-acid type of every peptide position from its backbone and its pocket.

Per residue i (``residue_features``), all unchanged by a reflection of the whole complex, so a design and its mirror
image get the same sequence (the hand is the backbone's, the residue types are the interface's):
- backbone: cos and s_i sin of the dihedrals phi_i, psi_i (s_i = sign of the residue's chirality volume, so that
  s_i sin is a true scalar; an L residue keeps its own sin), |CA_i - CA_i+k| for k = -4..4 (k != 0) / 10 A, masks;
- pocket: sum_j onehot(a_j) exp(-(d_ij / r)^2) for r = 6 and 10 A (d_ij = |CB_i - CB_j|), the same per type
  weighted by max(0, cos angle(CB_i - CA_i, CB_j - CA_i)) (pocket residues the side chain points at), pocket CB
  counts within 6/8/10/12 A, half-sphere exposure (pocket CAs within 13 A on the CB side and on the other side);
- peptide: its own CBs within 8 A, the position features of batches.position_features.
Model: a residue MLP, then one context layer over the sequence neighbours (h_i += MLP[h_i-1, h_i, h_i+1]), then
20 logits. Trained with Adam on the cross-entropy of native sequences on native backbones, early-stopped on
peptides from training files set aside (``split_validation``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable

import numpy as np
import torch
from torch import Tensor, nn

from .batches import MAX_LEN, position_features
from .data import AA1
from .geometry import chirality_volume
from .params import SeqHeadParams

N_FEAT = 4 + 2 + 16 + 60 + 4 + 2 + 1 + 5
HIDDEN = 96
DROPOUT = 0.1
WEIGHT_DECAY = 1e-4
BATCH = 64  # peptides per step
EVAL_EVERY = 25  # steps between validation losses (early stopping)
SIGMAS = (6.0, 10.0)


def _dihedral(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Batched dihedral angles a-b-c-d (radians)."""
    b0, b1, b2 = a - b, c - b, d - c
    b1 = b1 / np.linalg.norm(b1, axis=-1, keepdims=True)
    v = b0 - (b0 * b1).sum(-1, keepdims=True) * b1
    w = b2 - (b2 * b1).sum(-1, keepdims=True) * b1
    return np.arctan2((np.cross(b1, v) * w).sum(-1), (v * w).sum(-1))


def residue_features(pep: np.ndarray, pocket: np.ndarray, pocket_aa: np.ndarray) -> np.ndarray:
    """Features [L, N_FEAT] of the module docstring; pep [L, 4, 3] and pocket [K, 4, 3] in N, CA, C, CB order."""
    L = len(pep)
    n, ca, c, cb = (pep[:, i] for i in range(4))
    s = np.sign(chirality_volume(pep))
    bb = np.zeros((L, 6))
    if L > 1:
        phi = _dihedral(c[:-1], n[1:], ca[1:], c[1:])  # residues 1..L-1
        psi = _dihedral(n[:-1], ca[:-1], c[:-1], n[1:])  # residues 0..L-2
        bb[1:, 0], bb[1:, 1], bb[1:, 4] = np.cos(phi), s[1:] * np.sin(phi), 1.0
        bb[:-1, 2], bb[:-1, 3], bb[:-1, 5] = np.cos(psi), s[:-1] * np.sin(psi), 1.0
    span = np.zeros((L, 16))
    for j, k in enumerate((-4, -3, -2, -1, 1, 2, 3, 4)):
        i = np.arange(L)
        ok = (i + k >= 0) & (i + k < L)
        span[ok, j] = np.linalg.norm(ca[ok] - ca[i[ok] + k], axis=-1) / 10.0
        span[ok, 8 + j] = 1.0
    d = np.linalg.norm(cb[:, None] - pocket[None, :, 3], axis=-1)
    onehot = np.eye(20)[pocket_aa]
    side = cb - ca
    to_j = pocket[None, :, 3] - ca[:, None]
    cos = (to_j * side[:, None]).sum(-1) / (np.linalg.norm(to_j, axis=-1) * np.linalg.norm(side, axis=-1)[:, None]
                                           + 1e-9)
    near = [np.exp(-(d / r) ** 2) @ onehot for r in SIGMAS]
    facing = (np.exp(-(d / SIGMAS[1]) ** 2) * np.maximum(cos, 0.0)) @ onehot
    shells = np.stack([(d < r).sum(1) for r in (6.0, 8.0, 10.0, 12.0)], 1) / 10.0
    d_ca = np.linalg.norm(pocket[None, :, 1] - ca[:, None], axis=-1) < 13.0
    up = (d_ca & (cos > 0)).sum(1)
    hse = np.stack([up, d_ca.sum(1) - up], 1) / 10.0
    dp = np.linalg.norm(cb[:, None] - cb[None], axis=-1)
    self_n = ((dp < 8.0).sum(1) - 1)[:, None] / 4.0
    return np.concatenate([bb, span, *near, facing, shells, hse, self_n, position_features(L)[:L]], 1
                          ).astype(np.float32)


def split_validation(rows: list[dict], every: int) -> tuple[list[dict], list[dict]]:
    """(fit, validation): the rows of every ``every``-th source file (sorted names) go to validation, so that no
    overlapping segment of a validation chain is fitted."""
    files = sorted({r["source_file"] for r in rows})
    val = set(files[::every])
    return [r for r in rows if r["source_file"] not in val], [r for r in rows if r["source_file"] in val]


def rows_to_batch(rows: list[dict]) -> dict[str, np.ndarray]:
    """Padded features [n, MAX_LEN, N_FEAT], native types [n, MAX_LEN] (-1 = padding) of examples.parquet rows."""
    x = np.zeros((len(rows), MAX_LEN, N_FEAT), dtype=np.float32)
    y = np.full((len(rows), MAX_LEN), -1, dtype=np.int64)
    for k, r in enumerate(rows):
        f = residue_features(np.asarray(r["pep_xyz"]).reshape(-1, 4, 3), np.asarray(r["pocket_xyz"]).reshape(-1, 4, 3),
                             np.asarray(r["pocket_aa"]))
        x[k, : len(f)] = f
        y[k, : len(f)] = [AA1.index(a) for a in r["pep_seq"]]
    return {"x": x, "y": y}


class SequenceHead(nn.Module):
    """Residue MLP, one sequence-context layer, 20 logits (module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.residue = nn.Sequential(nn.Linear(N_FEAT, HIDDEN), nn.SiLU(), nn.Dropout(DROPOUT),
                                     nn.Linear(HIDDEN, HIDDEN), nn.SiLU())
        self.context = nn.Sequential(nn.Linear(3 * HIDDEN, HIDDEN), nn.SiLU(), nn.Dropout(DROPOUT))
        self.out = nn.Linear(HIDDEN, 20)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        """x [B, P, N_FEAT], mask [B, P] -> logits [B, P, 20]."""
        h = self.residue(x) * mask[..., None]
        pad = torch.zeros_like(h[:, :1])
        prev, nxt = torch.cat([pad, h[:, :-1]], 1), torch.cat([h[:, 1:], pad], 1)
        h = h + self.context(torch.cat([prev, h, nxt], -1))
        return self.out(h)


def fit_head(train: dict[str, np.ndarray], val: dict[str, np.ndarray], p: SeqHeadParams, seed: int, device: str,
             log: Callable[[str, float, int], None], progress: Callable[[Iterable[int]], Iterable[int]]
             ) -> tuple[SequenceHead, int]:
    """Adam (weight decay WEIGHT_DECAY) on the mean cross-entropy -log softmax(f(x))_y over the real residues of
    BATCH peptides drawn with replacement per step, for at most ``p.steps`` steps; every EVAL_EVERY steps the
    cross-entropy on ``val`` (peptides from training files set aside) is measured and the weights with the lowest
    are kept (early stopping: the training segments overlap, so the head memorises them within a few hundred
    steps). Logs ``seq_loss`` and ``seq_val_loss``; returns the head and its step."""
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    net = SequenceHead().to(device)
    opt = torch.optim.Adam(net.parameters(), lr=p.lr, weight_decay=WEIGHT_DECAY)
    X, Y = torch.as_tensor(train["x"], device=device), torch.as_tensor(train["y"], device=device)
    Xv, Yv = torch.as_tensor(val["x"], device=device), torch.as_tensor(val["y"], device=device)
    best, best_step, best_state = float("inf"), 0, copy.deepcopy(net.state_dict())
    for step in progress(range(1, p.steps + 1)):
        net.train()
        idx = torch.randint(len(X), (BATCH,), generator=g).to(device)
        y = Y[idx]
        logits = net(X[idx], (y >= 0).to(X.dtype))
        loss = nn.functional.cross_entropy(logits[y >= 0], y[y >= 0])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % EVAL_EVERY == 0:
            net.eval()
            with torch.no_grad():
                val_loss = nn.functional.cross_entropy(net(Xv, (Yv >= 0).to(Xv.dtype))[Yv >= 0], Yv[Yv >= 0]).item()
            log("seq_loss", loss.item(), step)
            log("seq_val_loss", val_loss, step)
            if val_loss < best:
                best, best_step, best_state = val_loss, step, copy.deepcopy(net.state_dict())
    net.load_state_dict(best_state)
    return net.eval(), best_step


def log_probs(net: SequenceHead, x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """log softmax of the logits [n, P, 20] (no gradient, eval mode)."""
    with torch.no_grad():
        logits = net(torch.as_tensor(x), torch.as_tensor(mask, dtype=torch.float32))
        return torch.log_softmax(logits, -1).numpy()


def assign_sequence(net: SequenceHead, pep: np.ndarray, pocket: np.ndarray, pocket_aa: np.ndarray
                    ) -> tuple[str, float]:
    """Argmax residue types argmax_a log p(a | backbone, pocket) of one peptide and their mean log-probability."""
    f = residue_features(pep, pocket, pocket_aa)[None]
    lp = log_probs(net, f, np.ones((1, len(pep))))[0]
    return "".join(AA1[i] for i in lp.argmax(-1)), float(lp.max(-1).mean())


def recovery_perplexity(logp: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Native sequence recovery mean_i [argmax logp_i = y_i] and perplexity exp(-mean_i logp_i[y_i]) over y >= 0."""
    m = y >= 0
    lp, yy = logp[m], y[m]
    return {"recovery": float((lp.argmax(-1) == yy).mean()),
            "perplexity": float(np.exp(-lp[np.arange(len(yy)), yy].mean()))}


def baselines(y_train: np.ndarray, y_test: np.ndarray) -> dict[str, float]:
    """Majority class (always the most frequent training type): its recovery; composition (every residue drawn from
    the training composition p, Laplace-smoothed): its perplexity exp(-mean log p(y)) and expected recovery
    sum_a p(a) q(a), q the test composition."""
    counts = np.bincount(y_train[y_train >= 0], minlength=20) + 1.0
    p = counts / counts.sum()
    yt = y_test[y_test >= 0]
    q = np.bincount(yt, minlength=20) / len(yt)
    return {"majority_recovery": float((yt == p.argmax()).mean()),
            "composition_perplexity": float(np.exp(-np.log(p[yt]).mean())),
            "composition_expected_recovery": float(p @ q), "majority_class": AA1[int(p.argmax())]}
