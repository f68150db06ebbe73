"""Contact-based residue classifier: amino-acid type of each peptide position from its backbone environment.

Features use only distances, so a design and its mirror image get the same sequence (the hand is set by the
backbone's geometry, the residue types by contacts).
"""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import torch
from safetensors.torch import save_file
from torch import nn

from paperdag.papers.pepmirror.batches import position_features
from paperdag.stage import StageContext

N_FEAT = 20 + 4 + 1 + 5 + 2


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


def make_classifier(hidden: int = 64) -> nn.Module:
    """MLP 32 -> hidden -> hidden -> 20 logits."""
    return nn.Sequential(nn.Linear(N_FEAT, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(),
                         nn.Linear(hidden, 20))


def rows_to_xy(rows: list[dict], contact_dist: float) -> tuple[np.ndarray, np.ndarray]:
    """Features and native residue indices of every peptide residue in ``rows``."""
    from paperdag.papers.pepmirror.data import AA1

    xs, ys = [], []
    for r in rows:
        pep = np.asarray(r["pep_xyz"]).reshape(-1, 4, 3)
        pocket = np.asarray(r["pocket_xyz"]).reshape(-1, 4, 3)
        xs.append(contact_features(pep, pocket, np.asarray(r["pocket_aa"]), contact_dist))
        ys.append([AA1.index(c) for c in r["pep_seq"]])
    return np.concatenate(xs), np.concatenate(ys)


def train_seq(ctx: StageContext) -> dict[str, float]:
    """Cross-entropy training of the classifier on training peptides; accuracy on the held-out natives."""
    p = ctx.params
    rows = pq.read_table(ctx.inputs["prepare"] / "examples.parquet").to_pylist()
    x, y = rows_to_xy([r for r in rows if r["split"] == "train"], p.contact_dist)
    xt, yt = rows_to_xy([r for r in rows if r["split"] == "target"], p.contact_dist)
    net = make_classifier().to(ctx.device)
    opt = torch.optim.Adam(net.parameters(), lr=p.seq_lr, weight_decay=1e-4)
    X, Y = torch.as_tensor(x, device=ctx.device), torch.as_tensor(y, device=ctx.device)
    for step in ctx.progress(range(p.seq_train_steps), desc="seq head"):
        idx = torch.as_tensor(ctx.rng.integers(len(X), size=256), device=ctx.device)
        loss = nn.functional.cross_entropy(net(X[idx]), Y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 20 == 0:
            ctx.log_metric("seq_loss", loss.item(), step)
    save_file({k: v.detach().cpu().contiguous() for k, v in net.state_dict().items()}, str(ctx.out / "seqhead.safetensors"))
    with torch.no_grad():
        acc = (net(torch.as_tensor(xt, device=ctx.device)).argmax(1).cpu().numpy() == yt).mean()
        train_acc = (net(X).argmax(1) == Y).float().mean().item()
    majority = float((yt == np.bincount(y, minlength=20).argmax()).mean())
    return {"seq_train_acc": train_acc, "seq_heldout_native_recovery": float(acc),
            "seq_heldout_majority_class_baseline": majority}
