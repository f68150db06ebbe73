"""Padded tensors from examples.parquet rows, centred on each pocket's CA centroid."""

from __future__ import annotations

import numpy as np
import torch

MAX_LEN = 12


def position_features(length: int) -> np.ndarray:
    """Per residue [i/11, (L-1-i)/11, i == 0, i == L-1, L/12] for a peptide of length L (padded to MAX_LEN)."""
    f = np.zeros((MAX_LEN, 5))
    i = np.arange(length)
    f[:length] = np.stack([i / 11, (length - 1 - i) / 11, i == 0, i == length - 1, np.full(length, length / 12)], 1)
    return f


def to_arrays(rows: list[dict], pocket_max: int) -> dict[str, np.ndarray]:
    """Stack rows into padded numpy arrays; ``center`` is each pocket's CA centroid (subtracted from all xyz)."""
    n = len(rows)
    out = {"pep_x": np.zeros((n, MAX_LEN, 4, 3)), "pep_mask": np.zeros((n, MAX_LEN)),
           "pos_feat": np.zeros((n, MAX_LEN, 5)), "pocket_x": np.zeros((n, pocket_max, 4, 3)),
           "pocket_aa": np.zeros((n, pocket_max), dtype=np.int64), "pocket_mask": np.zeros((n, pocket_max)),
           "center": np.zeros((n, 3))}
    for i, r in enumerate(rows):
        pep = np.asarray(r["pep_xyz"], dtype=np.float64).reshape(-1, 4, 3)
        pock = np.asarray(r["pocket_xyz"], dtype=np.float64).reshape(-1, 4, 3)[:pocket_max]
        center = pock[:, 1].mean(0)
        L, K = len(pep), len(pock)
        out["pep_x"][i, :L] = pep - center
        out["pep_mask"][i, :L] = 1.0
        out["pos_feat"][i] = position_features(L)
        out["pocket_x"][i, :K] = pock - center
        out["pocket_aa"][i, :K] = np.asarray(r["pocket_aa"])[:K]
        out["pocket_mask"][i, :K] = 1.0
        out["center"][i] = center
    return out


def to_torch(arrays: dict[str, np.ndarray], idx: np.ndarray, device: str, dtype: torch.dtype = torch.float32
             ) -> dict[str, torch.Tensor]:
    """Select rows ``idx`` and move them to ``device`` (floats as ``dtype``)."""
    return {k: torch.as_tensor(v[idx], device=device, dtype=torch.long if v.dtype == np.int64 else dtype)
            for k, v in arrays.items()}
